from dataclasses import dataclass, field

import lightning as L
import torch
from transformers import HfArgumentParser


@dataclass
class FabricArguments:
    devices: int = field(default=8, metadata={"help": "GPUs per node"})
    strategy: str = field(default="deepspeed_stage_2", metadata={"help": "Fabric strategy"})


def train(cfg) -> None:
    fabric = L.Fabric(accelerator="cuda", devices=cfg.devices, strategy=cfg.strategy)
    fabric.launch()
    model = torch.nn.Linear(32, 32)
    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    optimizer = fabric.setup_optimizers(optimizer)


if __name__ == "__main__":
    (fabric_args,) = HfArgumentParser((FabricArguments,)).parse_args_into_dataclasses()
    train(fabric_args)
