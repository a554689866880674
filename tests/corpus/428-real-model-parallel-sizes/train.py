import lightning as L
import torch
from lightning.fabric.strategies import ModelParallelStrategy
from torch.distributed.tensor.parallel import ColwiseParallel, parallelize_module


def parallelize(model, device_mesh):
    tp_mesh = device_mesh["tensor_parallel"]
    return parallelize_module(model, tp_mesh, {"w1": ColwiseParallel()})


def train():
    strategy = ModelParallelStrategy(parallelize_fn=parallelize, data_parallel_size=1, tensor_parallel_size=2)
    fabric = L.Fabric(accelerator="cuda", devices=4, strategy=strategy)
    fabric.launch()
    with fabric.init_module(empty_init=True):
        model = torch.nn.Linear(8, 8)
    model = fabric.setup(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    optimizer = fabric.setup_optimizers(optimizer)


if __name__ == "__main__":
    train()
