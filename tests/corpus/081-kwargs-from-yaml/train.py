import sys

import torch
import yaml
from lightning.fabric import Fabric

cfg = yaml.safe_load(open(sys.argv[1]))
fabric = Fabric(**cfg["fabric"])
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
