"""FAB002 FIXED: the rank guard around ``fabric.save`` removed (Fabric itself writes on rank 0 only
under DDP), DDP on 2 CPU processes (gloo).
"""
from datetime import timedelta

import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DDPStrategy

fabric = Fabric(accelerator="cpu", devices=2, strategy=DDPStrategy(timeout=timedelta(seconds=15)))
fabric.launch()
model = fabric.setup(torch.nn.Linear(4, 2))
fabric.save("checkpoint.ckpt", {"model": model})
fabric.barrier()
print(f"RUNTIME-OK rank={fabric.global_rank}")
