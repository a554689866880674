import torch

from fabric import Fabric

fabric = Fabric(strategy="deepspeed_stage_3")

model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
