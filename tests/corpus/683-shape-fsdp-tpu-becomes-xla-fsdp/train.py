import torch
from lightning.fabric import Fabric


def run(fabric):
    model = torch.nn.Linear(8, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = fabric.setup(model, optimizer)


fabric = Fabric(accelerator="tpu", strategy="fsdp")
fabric.launch(run)
