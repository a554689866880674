from typing import Literal

import torch
from jsonargparse import CLI
from lightning.fabric import Fabric


def main(
    strategy: Literal["auto", "ddp", "deepspeed_stage_2"] = "auto",
    devices: int = 1,
    lr: float = 3e-4,
) -> None:
    fabric = Fabric(strategy=strategy, devices=devices)
    fabric.launch()
    model = fabric.setup_module(torch.nn.Linear(10, 10))
    optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters(), lr=lr))


if __name__ == "__main__":
    CLI(main)
