import torch
import lightning as L

fabric = L.Fabric(strategy="deepspeed" if torch.cuda.device_count() > 1 else "auto")
fabric.launch()
model = torch.nn.Linear(3, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
if isinstance(fabric.strategy, (L.fabric.strategies.DeepSpeedStrategy, L.fabric.strategies.XLAStrategy)):
    model, optimizer = fabric.setup(model, optimizer)
else:
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(optimizer)
