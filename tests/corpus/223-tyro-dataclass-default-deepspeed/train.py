from dataclasses import dataclass

import lightning as L
import torch
import tyro


@dataclass
class TrainConfig:
    devices: int = 4
    strategy: str = "deepspeed_stage_2"
    lr: float = 1e-4


def train(cfg) -> None:
    fabric = L.Fabric(accelerator="cuda", devices=cfg.devices, strategy=cfg.strategy)
    fabric.launch()
    model = torch.nn.Linear(32, 32)
    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    optimizer = fabric.setup_optimizers(optimizer)


if __name__ == "__main__":
    train(tyro.cli(TrainConfig))
