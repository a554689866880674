import argparse

import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DDPStrategy, DeepSpeedStrategy, FSDPStrategy

STRATEGIES = {"ddp": DDPStrategy, "fsdp": FSDPStrategy, "deepspeed": DeepSpeedStrategy}

parser = argparse.ArgumentParser()
parser.add_argument("--strategy", choices=sorted(STRATEGIES), default="ddp")
args = parser.parse_args()

fabric = Fabric(strategy=STRATEGIES[args.strategy](), devices=4)
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
