import torch
from lightning.fabric import Fabric


def on_pod():
    fabric = Fabric(accelerator="tpu", devices="auto")
    fabric.launch()
    model = fabric.setup_module(torch.nn.Linear(4, 4))
    return fabric.setup_optimizers(torch.optim.Adam(model.parameters()))


def on_v3_8():
    fabric = Fabric(accelerator="tpu", devices="8")
    fabric.launch()
    model = fabric.setup_module(torch.nn.Linear(4, 4))
    return fabric.setup_optimizers(torch.optim.Adam(model.parameters()))


def on_v4_8():
    # v4-8 hosts have 4 chips; on a host with another count Fabric() raises ValueError before the call
    fabric = Fabric(accelerator="tpu", devices=4, strategy="auto")
    fabric.launch()
    model = fabric.setup_module(torch.nn.Linear(4, 4))
    return fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
