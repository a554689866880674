import argparse

import torch
from lightning.fabric import Fabric

parser = argparse.ArgumentParser()
parser.add_argument("--strategy", choices=["ddp", "fsdp", "xla_fsdp"], default="ddp")
args = parser.parse_args()
fabric = Fabric(strategy=args.strategy)
fabric.launch()

model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
