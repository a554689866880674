from dataclasses import dataclass

import hydra
import lightning as L
import torch
from hydra.core.config_store import ConfigStore


@dataclass
class Config:
    devices: int = 4
    strategy: str = "deepspeed"


cs = ConfigStore.instance()
cs.store(name="config", node=Config)


def train(cfg) -> None:
    fabric = L.Fabric(accelerator="cuda", devices=cfg.devices, strategy=cfg.strategy)
    fabric.launch()
    model = torch.nn.Linear(32, 32)
    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    optimizer = fabric.setup_optimizers(optimizer)


@hydra.main(version_base=None, config_name="config")
def main(cfg: Config) -> None:
    train(cfg)


if __name__ == "__main__":
    main()
