import torch
from lightning.fabric import Fabric


def run(strategy):
    fabric = Fabric(strategy=strategy, devices=2)
    fabric.launch()
    model = fabric.setup_module(torch.nn.Linear(10, 10))
    optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
    return model, optimizer


run("ddp")
run("ddp_spawn")
run("DDP_Find_Unused_Parameters_True")
run("dp")
