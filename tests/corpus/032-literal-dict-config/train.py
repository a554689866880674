import torch
from lightning.fabric import Fabric

cfg = {"strategy": "deepspeed_stage_2", "devices": 4, "lr": 1e-3}

fabric = Fabric(strategy=cfg["strategy"], devices=cfg["devices"])
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(7, 7))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters(), lr=cfg["lr"]))
