import torch
from lightning.fabric import Fabric

big = Fabric(strategy="deepspeed", devices=8)
small = Fabric(strategy="ddp", devices=2)
big.launch()
model = torch.nn.Linear(10, 10)
opt = torch.optim.Adam(model.parameters())
model, opt = big.setup(model, opt)
aux = small.setup_module(torch.nn.Linear(10, 1))
aux_opt = small.setup_optimizers(torch.optim.Adam(aux.parameters()))
