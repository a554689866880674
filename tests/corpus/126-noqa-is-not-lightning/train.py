import torch
from lightning.fabric import Fabric

fabric = Fabric(strategy="deepspeed", devices=2)
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(4, 4))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.95), eps=1e-8))  # noqa: E501
