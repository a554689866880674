import torch
from lightning.fabric import Fabric

from helpers import setup_module

ds_fabric = Fabric(strategy="deepspeed", devices=2)
ds_fabric.launch()
model = torch.nn.Linear(4, 4)
model, optimizer = setup_module(ds_fabric, model, torch.optim.Adam(model.parameters()))

eval_fabric = Fabric(strategy="ddp", devices=2)
probe = eval_fabric.setup_module(torch.nn.Linear(4, 1))
probe_opt = eval_fabric.setup_optimizers(torch.optim.SGD(probe.parameters(), lr=0.1))
