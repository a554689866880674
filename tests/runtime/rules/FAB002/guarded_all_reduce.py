"""FAB002 INVALID: ``fabric.all_reduce`` only on rank 0 (``if fabric.is_global_zero:``), DDP on 2 CPU
processes (gloo). Rank 1 finishes without entering the collective; rank 0 waits for it until gloo
reports the lost peer (or the 15 s process-group timeout).
"""
from datetime import timedelta

import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DDPStrategy

fabric = Fabric(accelerator="cpu", devices=2, strategy=DDPStrategy(timeout=timedelta(seconds=15)))
fabric.launch()
model = fabric.setup(torch.nn.Linear(4, 2))
loss = model(torch.ones(3, 4, device=fabric.device)).sum().detach()
if fabric.is_global_zero:
    mean_loss = fabric.all_reduce(loss, reduce_op="mean")
    print(f"mean loss {mean_loss.item():.4f}")
print(f"RUNTIME-OK rank={fabric.global_rank}")
