import torch
from lightning.fabric import Fabric

try:
    fabric = Fabric(strategy="deepspeed", devices=4)
except (ImportError, RuntimeError):
    fabric = Fabric(strategy="ddp", devices=4)
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(4, 4))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
