import torch
from lightning.fabric import Fabric

fabric = Fabric(devices=8)
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
