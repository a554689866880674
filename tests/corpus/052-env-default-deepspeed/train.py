import os

import torch
from lightning.fabric import Fabric

fabric = Fabric(strategy=os.environ.get("STRATEGY", "deepspeed"), devices=int(os.environ.get("DEVICES", "2")))
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
