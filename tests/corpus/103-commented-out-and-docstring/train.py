"""Training entry point.

Note: do not write `optimizer = fabric.setup_optimizers(optimizer)` here, DeepSpeed needs joint setup.
"""
import torch
from lightning.fabric import Fabric

fabric = Fabric(strategy="deepspeed_stage_2", devices=2)
fabric.launch()
model = torch.nn.Linear(10, 10)
optimizer = torch.optim.Adam(model.parameters())
# model = fabric.setup_module(model)
# optimizer = fabric.setup_optimizers(optimizer)
model, optimizer = fabric.setup(model, optimizer)
