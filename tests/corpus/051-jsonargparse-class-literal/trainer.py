from typing import Literal

import torch
from jsonargparse import CLI
from lightning.fabric import Fabric


class Trainer:
    def __init__(self, strategy: Literal["ddp", "xla"] = "ddp", devices: int = 8):
        self.fabric = Fabric(strategy=strategy, devices=devices)

    def fit(self) -> None:
        self.fabric.launch()
        model = self.fabric.setup_module(torch.nn.Linear(10, 10))
        optimizer = self.fabric.setup_optimizers(torch.optim.Adam(model.parameters()))


if __name__ == "__main__":
    CLI(Trainer).fit()
