import torch
from lightning.fabric import Fabric

fabric = None


def init(devices):
    global fabric
    fabric = Fabric(strategy="deepspeed", devices=devices)
    fabric.launch()


def train(model):
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
    return model, optimizer


if __name__ == "__main__":
    init(2)
    train(torch.nn.Linear(3, 3))
