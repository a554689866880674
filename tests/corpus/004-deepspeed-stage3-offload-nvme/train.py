import torch
from lightning.fabric import Fabric


def big_run(model, optimizer):
    fabric = Fabric(strategy="deepspeed_stage_3_offload_nvme", devices=8)
    fabric.launch()
    model = fabric.setup_module(model)
    return model, fabric.setup_optimizers(optimizer)


def small_run(model, optimizer):
    fabric = Fabric(strategy="deepspeed_stage_1_offload", devices=2)
    fabric.launch()
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(optimizer)
    return model, optimizer
