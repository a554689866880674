import argparse

import torch
from lightning.fabric import Fabric

parser = argparse.ArgumentParser()
parser.add_argument("--strategy", choices=["ddp", "deepspeed"], default="ddp")
args = parser.parse_args()

fabric = Fabric(strategy=args.strategy, devices=2)
fabric.launch()
model = torch.nn.Linear(3, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
if args.strategy == "ddp":
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(optimizer)
else:
    model, optimizer = fabric.setup(model, optimizer)
