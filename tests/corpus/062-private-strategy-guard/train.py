import torch
import lightning as L
from lightning.fabric.strategies import DeepSpeedStrategy, XLAStrategy

fabric = L.Fabric(strategy=XLAStrategy() if torch.cuda.device_count() == 0 else "ddp")
fabric.launch()
model = torch.nn.Linear(3, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
if isinstance(fabric._strategy, (DeepSpeedStrategy, XLAStrategy)):
    model, optimizer = fabric.setup(model, optimizer)
else:
    model = fabric.setup(model)
    optimizer = fabric.setup_optimizers(optimizer)
