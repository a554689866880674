import torch
import lightning as L
from lightning.fabric.strategies import ModelParallelStrategy
from torch.distributed._composable.fsdp import fully_shard
from model import GPT


def parallelize(model, device_mesh):
    for block in model.h:
        fully_shard(block, mesh=device_mesh["data_parallel"])
    fully_shard(model, mesh=device_mesh["data_parallel"])
    return model


strategy = ModelParallelStrategy(parallelize_fn=parallelize, data_parallel_size=4, tensor_parallel_size=1)
fabric = L.Fabric(accelerator="cuda", devices=4, strategy=strategy)
fabric.launch()
with fabric.init_module(empty_init=True):
    model = GPT()
model = fabric.setup(model)
optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters(), lr=3e-4))
sample = model.generate(idx, max_new_tokens=20)
