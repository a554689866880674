import torch
from lightning.fabric import Fabric

from config import TrainConfig

cfg = TrainConfig()
fabric = Fabric(strategy=cfg.strategy, devices=cfg.devices)
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(4, 4))
optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters(), lr=cfg.lr))
