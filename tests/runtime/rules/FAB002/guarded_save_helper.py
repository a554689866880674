"""FAB002 INVALID: a helper whose body is ``fabric.save`` (a collective: it ends in ``barrier()``,
fabric.py:867), called on every rank once, then under ``if fabric.global_rank == 0:``. DDP on 2 CPU
processes (gloo): rank 1 finishes; rank 0's second save waits at its barrier until gloo reports the
lost peer (or the 15 s process-group timeout).
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
if fabric.global_rank == 0:
    save_checkpoint(fabric, model, 1)
print(f"RUNTIME-OK rank={fabric.global_rank}")
