"""FAB002 INVALID: ``fabric.save`` (a collective: it ends in a barrier) under a rank-0 guard, DDP on
2 CPU processes (gloo). Rank 1 never enters the save's barrier, so rank 0 is left waiting: gloo
reports the lost peer (or the 15 s process-group timeout; NCCL would wait 30 minutes).
"""
from datetime import timedelta

import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DDPStrategy

fabric = Fabric(accelerator="cpu", devices=2, strategy=DDPStrategy(timeout=timedelta(seconds=15)))
fabric.launch()
model = fabric.setup(torch.nn.Linear(4, 2))
if fabric.global_rank == 0:
    fabric.save("checkpoint.ckpt", {"model": model})
fabric.barrier()
print(f"RUNTIME-OK rank={fabric.global_rank}")
