import torch
from lightning.fabric import Fabric

fabric = Fabric(strategy="ddp", devices=2)  # first attempt, kept for reference
fabric = Fabric(strategy="deepspeed_stage_2", devices=2)
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(6, 6))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
