import os

import torch
from lightning.fabric import Fabric

fabric = Fabric(strategy=os.environ["STRATEGY"], devices=int(os.environ.get("WORLD_SIZE", "1")))
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
