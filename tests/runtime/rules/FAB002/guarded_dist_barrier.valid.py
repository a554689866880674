"""FAB002 VALID: every rank enters ``torch.distributed.barrier()``; only the work of rank 0 stays
under the guard. DDP on 2 CPU processes (gloo).
"""
from datetime import timedelta

import torch.distributed as dist
from lightning.fabric import Fabric
from lightning.fabric.strategies import DDPStrategy

fabric = Fabric(accelerator="cpu", devices=2, strategy=DDPStrategy(timeout=timedelta(seconds=15)))
fabric.launch()
if fabric.global_rank == 0:
    print("preparing files")
dist.barrier()
print(f"RUNTIME-OK rank={fabric.global_rank}")
