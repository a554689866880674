import argparse

import torch
from lightning.fabric import Fabric


def parse_args():
    parser = argparse.ArgumentParser(description="pretrain")
    parser.add_argument("--strategy", choices=["ddp", "fsdp", "deepspeed"], default="ddp")
    parser.add_argument("--devices", type=int, default=1)
    return parser.parse_args()


def main():
    args = parse_args()
    fabric = Fabric(strategy=args.strategy, devices=args.devices)
    fabric.launch()
    model = fabric.setup_module(torch.nn.Linear(10, 10))
    optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
    return model, optimizer


if __name__ == "__main__":
    main()
