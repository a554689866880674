from dataclasses import dataclass
from typing import Literal

import lightning as L
import torch
import tyro


@dataclass
class TrainConfig:
    devices: int = 4
    strategy: Literal["ddp", "fsdp", "deepspeed"] = "ddp"


def train(cfg) -> None:
    fabric = L.Fabric(accelerator="cuda", devices=cfg.devices, strategy=cfg.strategy)
    fabric.launch()
    model = torch.nn.Linear(32, 32)
    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    optimizer = fabric.setup_optimizers(optimizer)


if __name__ == "__main__":
    train(tyro.cli(TrainConfig))
