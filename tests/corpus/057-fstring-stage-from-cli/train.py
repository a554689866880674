import argparse

import torch
from lightning.fabric import Fabric

parser = argparse.ArgumentParser()
parser.add_argument("--stage", type=int, choices=[1, 2, 3], default=2)
args = parser.parse_args()

fabric = Fabric(strategy=f"deepspeed_stage_{args.stage}", devices=4)
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
