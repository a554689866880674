import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DeepSpeedStrategy as DS
from lightning.fabric.strategies import XLAStrategy as XLA

fabric = Fabric(strategy=DS(stage=3) if torch.cuda.is_available() else XLA())
fabric.launch()
model = torch.nn.Linear(3, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
if isinstance(fabric.strategy, (DS, XLA)):
    model, optimizer = fabric.setup(model, optimizer)
else:
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(optimizer)
