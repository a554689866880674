import torch
from lightning.fabric import Fabric


def train(fabric):
    model = fabric.setup_module(torch.nn.Linear(32, 32))
    optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
    return model, optimizer


fabric = Fabric(accelerator="tpu")
fabric.launch(train)
