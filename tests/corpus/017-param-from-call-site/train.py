import torch
from lightning.fabric import Fabric


def fit(fabric, model, data):
    model = fabric.setup_module(model)
    optimizer = torch.optim.Adam(model.parameters())
    optimizer = fabric.setup_optimizers(optimizer)
    for x in data:
        fabric.backward(model(x).sum())
        optimizer.step()


if __name__ == "__main__":
    fabric = Fabric(strategy="deepspeed", devices=2)
    fabric.launch()
    fit(fabric, torch.nn.Linear(3, 1), [torch.randn(2, 3)])
