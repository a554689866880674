import argparse

import torch
from lightning.fabric import Fabric

parser = argparse.ArgumentParser()
parser.add_argument("--strategy", type=str, default="ddp")
parser.add_argument("--devices", type=int, default=2)
args = parser.parse_args()

fabric = Fabric(strategy=args.strategy, devices=args.devices)
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
