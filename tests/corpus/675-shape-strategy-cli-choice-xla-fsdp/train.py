import argparse

import torch
from lightning.fabric import Fabric

parser = argparse.ArgumentParser()
parser.add_argument("--strategy", choices=["ddp", "fsdp", "xla_fsdp"], default="ddp")
args = parser.parse_args()

fabric = Fabric(strategy=args.strategy)
fabric.launch()
model = torch.nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = fabric.setup(model, optimizer)
