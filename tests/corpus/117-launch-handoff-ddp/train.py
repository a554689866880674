import torch
from lightning.fabric import Fabric


def main(fabric):
    model = fabric.setup_module(torch.nn.Linear(10, 10))
    optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
    return model, optimizer


if __name__ == "__main__":
    Fabric(strategy="ddp", devices=4).launch(main)
