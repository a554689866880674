import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import XLAStrategy


class DebugXLA(XLAStrategy):
    pass


class ProfiledXLA(DebugXLA):
    def __init__(self, **kw):
        super().__init__(**kw)


fabric = Fabric(accelerator="tpu", strategy=ProfiledXLA())
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(2, 2))
optimizer = fabric.setup_optimizers(torch.optim.SGD(model.parameters(), lr=0.1))
