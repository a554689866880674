"""FAB002 VALID: the collective runs on every rank; only the print stays under the rank-0 guard.
DDP on 2 CPU processes (gloo).
"""
from datetime import timedelta

import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DDPStrategy

fabric = Fabric(accelerator="cpu", devices=2, strategy=DDPStrategy(timeout=timedelta(seconds=15)))
fabric.launch()
model = fabric.setup(torch.nn.Linear(4, 2))
loss = model(torch.ones(3, 4, device=fabric.device)).sum().detach()
mean_loss = fabric.all_reduce(loss, reduce_op="mean")
if fabric.is_global_zero:
    print(f"mean loss {mean_loss.item():.4f}")
print(f"RUNTIME-OK rank={fabric.global_rank}")
