import argparse

import torch
from lightning.fabric import Fabric

parser = argparse.ArgumentParser()
parser.add_argument("--strategy", choices=["ddp", "deepspeed_stage_2", "deepspeed_stage_3", "xla"], default="ddp")
args = parser.parse_args()

fabric = Fabric(strategy=args.strategy)
fabric.launch()
model = torch.nn.Linear(4, 4)
optimizer = torch.optim.Adam(model.parameters())
if "deepspeed" in args.strategy or args.strategy == "xla":
    model, optimizer = fabric.setup(model, optimizer)
else:
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(optimizer)
