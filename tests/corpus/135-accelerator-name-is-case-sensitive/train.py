import torch
from lightning.fabric import Fabric

fabric = Fabric(accelerator="TPU", devices=8)
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(4, 4))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
