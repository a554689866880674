import torch
from lightning.fabric import Fabric


@torch.no_grad()
def evaluate(model):
    fabric = Fabric(strategy="deepspeed_stage_3", devices=4)
    fabric.launch()
    model = fabric.setup(model)
    return model(torch.randn(1, 10, device=fabric.device))


def calibrate(model):
    fabric = Fabric(strategy="ddp", devices=4)
    fabric.launch()
    head = fabric.setup_module(torch.nn.Linear(10, 2))
    opt = fabric.setup_optimizers(torch.optim.SGD(head.parameters(), lr=0.1))
    return head, opt
