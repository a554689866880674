import time

import torch
from lightning.fabric import Fabric

for strategy in ("ddp", "deepspeed_stage_2"):
    fabric = Fabric(strategy=strategy, devices=2)
    fabric.launch()
    model = fabric.setup_module(torch.nn.Linear(1024, 1024))
    optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
    t0 = time.time()
    print(strategy, time.time() - t0)
