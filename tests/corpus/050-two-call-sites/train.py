import torch
from lightning.fabric import Fabric


def fit(fabric, model):
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
    return model, optimizer


def small():
    fabric = Fabric(strategy="ddp", devices=2)
    fabric.launch()
    return fit(fabric, torch.nn.Linear(4, 4))


def large():
    fabric = Fabric(strategy="deepspeed_stage_3", devices=8)
    fabric.launch()
    return fit(fabric, torch.nn.Linear(4096, 4096))
