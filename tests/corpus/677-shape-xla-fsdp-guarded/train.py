import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import XLAFSDPStrategy

fabric = Fabric(strategy="xla_fsdp" if on_tpu else "ddp")
fabric.launch(lambda f: None) if on_tpu else fabric.launch()
model = torch.nn.Linear(8, 2)
if isinstance(fabric.strategy, XLAFSDPStrategy):
    model = fabric.setup_module(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    optimizer = fabric.setup_optimizers(optimizer)
else:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = fabric.setup(model, optimizer)
