import torch
from jsonargparse import CLI
from lightning.fabric import Fabric


def main(strategy: str = "deepspeed", devices: int = 4) -> None:
    fabric = Fabric(strategy=strategy, devices=devices)
    fabric.launch()
    model = fabric.setup_module(torch.nn.Linear(10, 10))
    optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))


if __name__ == "__main__":
    CLI(main)
