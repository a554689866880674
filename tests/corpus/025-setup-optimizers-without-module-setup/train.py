import torch
from lightning.fabric import Fabric

fabric = Fabric(strategy="deepspeed", devices=2)
fabric.launch()
model = torch.nn.Linear(6, 6)
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
