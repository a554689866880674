import argparse

import torch
from lightning.fabric import Fabric

parser = argparse.ArgumentParser()
parser.add_argument("--strategy", type=str, default="deepspeed")
args = parser.parse_args()

fabric = Fabric(strategy=args.strategy, devices=2)
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
