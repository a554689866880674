"""FAB002 INVALID: a raw ``torch.distributed.barrier()`` on rank 0 only, DDP on 2 CPU processes
(gloo). Rank 1 finishes without entering it; rank 0 waits until gloo reports the lost peer (or the
15 s process-group timeout).
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
