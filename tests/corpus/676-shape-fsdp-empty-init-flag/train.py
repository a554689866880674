import argparse

import torch
from lightning.fabric import Fabric

parser = argparse.ArgumentParser()
parser.add_argument("--empty-init", action="store_true")
args = parser.parse_args()

fabric = Fabric(accelerator="cuda", devices=2, strategy="fsdp")
fabric.launch()
with fabric.init_module(empty_init=args.empty_init):
    model = torch.nn.Transformer(d_model=64, nhead=4)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
model, optimizer = fabric.setup(model, optimizer)
