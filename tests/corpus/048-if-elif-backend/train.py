import os

import torch
from lightning.fabric import Fabric


def pick_strategy(backend: str):
    if backend == "tpu":
        strategy = "xla"
    elif backend == "multi-gpu-large":
        strategy = "fsdp"
    else:
        strategy = "ddp"
    return strategy


fabric = Fabric(strategy=pick_strategy(os.environ.get("BACKEND", "gpu")))
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
