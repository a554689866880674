from typing import Literal

import torch
from jsonargparse import CLI
from lightning.fabric import Fabric


def main(strategy: Literal["auto", "ddp", "fsdp"] = "auto"):
    fabric = Fabric(strategy=strategy)
    fabric.launch()
    model = fabric.setup_module(torch.nn.Linear(10, 10))
    optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))


if __name__ == "__main__":
    CLI(main)
