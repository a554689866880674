import torch
from lightning.fabric import Fabric


class DSFabric(Fabric):
    def __init__(self, strategy="deepspeed", **kwargs):
        super().__init__(strategy=strategy, **kwargs)


def pretrain():
    fabric = DSFabric(devices=2)
    fabric.launch()
    model = fabric.setup_module(torch.nn.Linear(4, 4))
    return fabric.setup_optimizers(torch.optim.Adam(model.parameters()))


def probe():
    fabric = DSFabric(strategy="ddp", devices=2)
    fabric.launch()
    model = fabric.setup_module(torch.nn.Linear(4, 1))
    return fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
