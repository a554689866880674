from dataclasses import dataclass
from typing import Literal

import torch
from jsonargparse import CLI
from lightning.fabric import Fabric


@dataclass
class TrainArgs:
    strategy: Literal["ddp", "deepspeed"] = "ddp"
    devices: int = 2


def main(args: TrainArgs) -> None:
    fabric = Fabric(strategy=args.strategy, devices=args.devices)
    fabric.launch()
    model = fabric.setup_module(torch.nn.Linear(4, 4))
    optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters()))


if __name__ == "__main__":
    main(CLI(TrainArgs))
