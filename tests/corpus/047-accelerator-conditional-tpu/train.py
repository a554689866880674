import argparse

import torch
from lightning.fabric import Fabric

parser = argparse.ArgumentParser()
parser.add_argument("--tpu", action="store_true")
args = parser.parse_args()

fabric = Fabric(accelerator="tpu" if args.tpu else "cuda", devices=8)
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
