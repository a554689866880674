import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DeepSpeedStrategy, XLAStrategy

fabric = Fabric(strategy="deepspeed_stage_3", devices=8)
fabric.launch()
model = torch.nn.Linear(3, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
if isinstance(fabric.strategy, (DeepSpeedStrategy, XLAStrategy)):
    model, optimizer = fabric.setup(model, optimizer)
else:
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(optimizer)
