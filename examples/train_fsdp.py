"""FSDP with separated setup is correct (and recommended): no finding."""

import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import FSDPStrategy

fabric = Fabric(accelerator="cuda", devices=4, strategy=FSDPStrategy(sharding_strategy="FULL_SHARD"))
fabric.launch()

with fabric.init_module():
    model = torch.nn.Linear(32, 2)
model = fabric.setup_module(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)
