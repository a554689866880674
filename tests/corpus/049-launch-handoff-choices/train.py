import argparse

import torch
from lightning.fabric import Fabric


def main(fabric, args):
    model = torch.nn.Linear(args.hidden, args.hidden)
    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    optimizer = fabric.setup_optimizers(optimizer)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--strategy", default="ddp", choices=("ddp", "fsdp", "deepspeed_stage_3"))
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args()
    fabric = Fabric(strategy=args.strategy, devices=2)
    fabric.launch(main, args)
