import torch
from fabric_ext import DSFabric

fabric = DSFabric(devices=2, precision="16-mixed")
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(4, 4))
optimizer = fabric.setup_optimizers(torch.optim.SGD(model.parameters(), lr=0.1))
