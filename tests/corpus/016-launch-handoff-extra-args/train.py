import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DeepSpeedStrategy


def train(fabric, model, lr, epochs=1):
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(torch.optim.SGD(model.parameters(), lr=lr))
    for _ in range(epochs):
        pass


def cli():
    fabric = Fabric(strategy=DeepSpeedStrategy(stage=1), devices=4)
    model = torch.nn.Linear(10, 10)
    fabric.launch(train, model, 0.1, epochs=3)


if __name__ == "__main__":
    cli()
