import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import ModelParallelStrategy


def parallelize(model, device_mesh):
    return model


fabric = Fabric(strategy=ModelParallelStrategy(parallelize_fn=parallelize, data_parallel_size=2), devices=4)
fabric.launch()

model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
