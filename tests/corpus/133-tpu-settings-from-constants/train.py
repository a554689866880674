import torch
from lightning.fabric import Fabric

from settings import ACCELERATOR, NUM_CORES, SHARDED


def debug_run():
    fabric = Fabric(accelerator=ACCELERATOR, devices=NUM_CORES, strategy="auto")
    fabric.launch()
    model = fabric.setup_module(torch.nn.Linear(4, 4))
    return fabric.setup_optimizers(torch.optim.Adam(model.parameters()))


def sharded_run():
    fabric = Fabric(accelerator=ACCELERATOR, strategy=SHARDED)
    fabric.launch()
    model = fabric.setup_module(torch.nn.Linear(4, 4))
    return fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
