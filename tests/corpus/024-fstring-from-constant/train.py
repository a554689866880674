import torch
from lightning.fabric import Fabric

STAGE = 3

fabric = Fabric(strategy=f"deepspeed_stage_{STAGE}", devices=4)
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(6, 6))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
