import torch

from .env import make_fabric


def main():
    fabric = make_fabric()
    fabric.launch()
    model = fabric.setup_module(torch.nn.Linear(7, 7))
    optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
    return optimizer
