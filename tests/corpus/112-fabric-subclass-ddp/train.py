import torch
from lightning.fabric import Fabric


class ClusterFabric(Fabric):
    def __init__(self, **kwargs):
        kwargs.pop("strategy", None)
        super().__init__(strategy="ddp", **kwargs)


fabric = ClusterFabric(devices=4)
fabric.launch()

model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
