import os

import torch
from lightning.fabric import Fabric

fabric = Fabric(strategy=os.environ["TRAIN_STRATEGY"])
fabric.launch()
model = torch.nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = fabric.setup(model, optimizer)
