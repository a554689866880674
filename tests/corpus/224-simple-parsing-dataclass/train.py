from dataclasses import dataclass

import lightning as L
import torch
from simple_parsing import ArgumentParser


@dataclass
class TrainConfig:
    devices: int = 8
    strategy: str = "deepspeed"


def train(cfg) -> None:
    fabric = L.Fabric(accelerator="cuda", devices=cfg.devices, strategy=cfg.strategy)
    fabric.launch()
    model = torch.nn.Linear(32, 32)
    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    optimizer = fabric.setup_optimizers(optimizer)


if __name__ == "__main__":
    parser = ArgumentParser()
    parser.add_arguments(TrainConfig, dest="config")
    args = parser.parse_args()
    train(args.config)
