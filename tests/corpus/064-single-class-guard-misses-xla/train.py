import sys

import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DeepSpeedStrategy, XLAStrategy

if "--tpu" in sys.argv:
    fabric = Fabric(accelerator="tpu", strategy=XLAStrategy())
elif "--large" in sys.argv:
    fabric = Fabric(accelerator="cuda", strategy=DeepSpeedStrategy(stage=2), devices=8)
else:
    fabric = Fabric(accelerator="cuda", strategy="ddp", devices=8)
fabric.launch()
model = torch.nn.Linear(3, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
if isinstance(fabric.strategy, DeepSpeedStrategy):
    model, optimizer = fabric.setup(model, optimizer)
else:
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(optimizer)
