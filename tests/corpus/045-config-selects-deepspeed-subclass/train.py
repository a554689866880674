import sys

import torch
import yaml
from lightning.fabric import Fabric

from strategies import strategy_from_config

with open(sys.argv[1]) as fh:
    cfg = yaml.safe_load(fh)

fabric = Fabric(strategy=strategy_from_config(cfg), devices=cfg.get("devices", 1))
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
