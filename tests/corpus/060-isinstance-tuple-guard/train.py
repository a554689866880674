import argparse

import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DeepSpeedStrategy, XLAStrategy


def main(fabric, lr):
    model = torch.nn.Linear(10, 10)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    if isinstance(fabric.strategy, (DeepSpeedStrategy, XLAStrategy)):
        model, optimizer = fabric.setup(model, optimizer)
    else:
        model = fabric.setup_module(model)
        optimizer = fabric.setup_optimizers(optimizer)
    return model, optimizer


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--strategy", choices=["ddp", "fsdp", "deepspeed", "xla"], default="ddp")
    args = parser.parse_args()
    fabric = Fabric(strategy=args.strategy)
    fabric.launch(main, 1e-3)
