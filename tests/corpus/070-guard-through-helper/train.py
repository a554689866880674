import torch
from lightning.fabric import Fabric

from utils import needs_joint_setup

fabric = Fabric(strategy="deepspeed" if torch.cuda.device_count() > 1 else "ddp")
fabric.launch()
model = torch.nn.Linear(3, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
if needs_joint_setup(fabric):
    model, optimizer = fabric.setup(model, optimizer)
else:
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(optimizer)
