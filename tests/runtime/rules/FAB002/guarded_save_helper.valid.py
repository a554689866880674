"""FAB002 VALID: the helper that saves runs on every rank both times (Fabric writes on rank 0).
DDP on 2 CPU processes (gloo).
"""
from datetime import timedelta

import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DDPStrategy


def save_checkpoint(fabric, model, step):
    fabric.save(f"step-{step}.ckpt", {"model": model, "step": step})


fabric = Fabric(accelerator="cpu", devices=2, strategy=DDPStrategy(timeout=timedelta(seconds=15)))
fabric.launch()
model = fabric.setup(torch.nn.Linear(4, 2))
save_checkpoint(fabric, model, 0)
save_checkpoint(fabric, model, 1)
print(f"RUNTIME-OK rank={fabric.global_rank}")
