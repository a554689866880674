import torch
from utils.factory import build_fabric

fabric = build_fabric()
model = torch.nn.Linear(10, 10)
model = fabric.setup_module(model)
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
