"""FAB002 VALID: every rank runs the sharded model's forward; only the print stays under the rank-0
guard. ``ModelParallelStrategy`` + FSDP2's ``fully_shard`` on 2 CPU processes (gloo).
"""
from datetime import timedelta

import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import ModelParallelStrategy
from torch.distributed.fsdp import fully_shard


def parallelize(model, device_mesh):
    fully_shard(model, mesh=device_mesh["data_parallel"])
    return model


strategy = ModelParallelStrategy(
    parallelize_fn=parallelize, data_parallel_size=2, tensor_parallel_size=1, timeout=timedelta(seconds=15)
)
fabric = Fabric(accelerator="cpu", devices=2, strategy=strategy)
fabric.launch()
model = fabric.setup_module(torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)))
x = torch.ones(2, 8, device=fabric.device)
with torch.no_grad():
    sample = model(x)
if fabric.global_rank == 0:
    print(f"sample {sample.sum().item():.4f}")
fabric.barrier()
print(f"RUNTIME-OK rank={fabric.global_rank}")
