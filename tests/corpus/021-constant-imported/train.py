import torch
from lightning.fabric import Fabric

from config import DEVICES, LR, STRATEGY

fabric = Fabric(strategy=STRATEGY, devices=DEVICES)
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(2, 2))
optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters(), lr=LR))
