"""FAB002 VALID: ``rank_zero_first`` keeps only per-rank work (here a folder is made, rank 0 first);
the collective ``fabric.save`` runs after it on every rank. DDP on 2 CPU processes (gloo).
"""
import os
from datetime import timedelta

import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DDPStrategy

fabric = Fabric(accelerator="cpu", devices=2, strategy=DDPStrategy(timeout=timedelta(seconds=15)))
fabric.launch()
model = fabric.setup(torch.nn.Linear(4, 2))
with fabric.rank_zero_first():
    os.makedirs("checkpoints", exist_ok=True)
fabric.save(os.path.join("checkpoints", "last.ckpt"), {"model": model})
fabric.barrier()
print(f"RUNTIME-OK rank={fabric.global_rank}")
