import os

import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DeepSpeedStrategy

use_ds = os.environ.get("USE_DEEPSPEED") == "1"
fabric = Fabric(strategy="deepspeed_stage_2" if use_ds else "ddp", devices=4)
fabric.launch()
model = torch.nn.Linear(3, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
if isinstance(fabric.strategy, DeepSpeedStrategy):
    model, optimizer = fabric.setup(model, optimizer)
else:
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(optimizer)
