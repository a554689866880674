import torch
from lightning.fabric import Fabric


def train(model):
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
    return model, optimizer


if __name__ == "__main__":
    fabric = Fabric(strategy="deepspeed_stage_3", devices=4)
    fabric.launch()
    train(torch.nn.Linear(4, 4))
