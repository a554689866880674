import torch
from lightning.fabric import Fabric


def main(fabric):
    model = fabric.setup_module(torch.nn.Linear(4, 4))
    optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
    return model, optimizer


fabric = Fabric(strategy="deepspeed", devices=2)
fabric.launch(function=main)
