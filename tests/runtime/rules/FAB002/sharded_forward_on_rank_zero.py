"""FAB002 INVALID: the forward of a sharded model on rank 0 only. ``ModelParallelStrategy`` whose
``parallelize_fn`` shards the model with FSDP2's ``fully_shard`` over 2 CPU processes (gloo): each
forward all-gathers the parameter shards (model_parallel.py:185, wrappers.py:130-136), so rank 0
waits in the gather for rank 1, which went on to the barrier, until the 15 s process-group timeout.
(FSDPStrategy itself needs a GPU: connector.py:436.)
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
if fabric.global_rank == 0:
    with torch.no_grad():
        print(f"sample {model(x).sum().item():.4f}")
fabric.barrier()
print(f"RUNTIME-OK rank={fabric.global_rank}")
