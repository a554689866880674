"""Run with: fabric run --accelerator=cuda --devices=4 --strategy=deepspeed train.py"""
import torch
from lightning.fabric import Fabric

fabric = Fabric()
model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
