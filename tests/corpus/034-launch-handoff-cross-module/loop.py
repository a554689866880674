import torch


def run(fabric, epochs):
    model = fabric.setup_module(torch.nn.Linear(7, 7))
    optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
    for _ in range(epochs):
        pass
