import torch
from lightning.fabric import Fabric


def net():
    return torch.nn.Linear(4, 4)


def stage1():
    fabric = Fabric(strategy="deepspeed_stage_1", devices=2)
    fabric.launch()
    model = fabric.setup_module(net())
    return fabric.setup_optimizers(torch.optim.Adam(model.parameters()))


def stage2():
    fabric = Fabric(strategy="DEEPSPEED_STAGE_2", devices=2)
    fabric.launch()
    model = fabric.setup_module(net())
    return fabric.setup_optimizers(torch.optim.Adam(model.parameters()))


def stage3():
    fabric = Fabric(strategy="deepspeed_stage_3", devices=2)
    fabric.launch()
    model = fabric.setup(net())
    return fabric.setup_optimizers(torch.optim.Adam(model.parameters()))


def stage3_offload():
    fabric = Fabric(strategy="Deepspeed_Stage_3_Offload", devices=2)
    fabric.launch()
    model = fabric.setup(net())
    return fabric.setup_optimizers(torch.optim.Adam(model.parameters()))


def xla():
    fabric = Fabric(accelerator="tpu", strategy="XLA")
    fabric.launch()
    model = fabric.setup(net())
    return fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
