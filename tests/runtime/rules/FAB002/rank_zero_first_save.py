"""FAB002 INVALID: ``fabric.save`` inside ``with fabric.rank_zero_first():``, DDP on 2 CPU processes
(gloo). The body runs on rank 0 first while rank 1 waits at the context's own barrier, so the
barrier inside ``save`` on rank 0 has no partner: it times out (15 s process-group timeout here).
"""
from datetime import timedelta

import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DDPStrategy

fabric = Fabric(accelerator="cpu", devices=2, strategy=DDPStrategy(timeout=timedelta(seconds=15)))
fabric.launch()
model = fabric.setup(torch.nn.Linear(4, 2))
with fabric.rank_zero_first():
    fabric.save("checkpoint.ckpt", {"model": model})
fabric.barrier()
print(f"RUNTIME-OK rank={fabric.global_rank}")
