import torch
from lightning.fabric import Fabric


class Loop:
    def __init__(self, epochs=1):
        self.epochs = epochs

    def run(self, fabric, model):
        model = fabric.setup_module(model)
        optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
        for _ in range(self.epochs):
            pass


if __name__ == "__main__":
    fabric = Fabric(strategy="deepspeed", devices=2)
    fabric.launch()
    Loop(epochs=2).run(fabric, torch.nn.Linear(4, 4))
