import torch
from lightning.fabric import Fabric as F
from lightning.fabric.strategies import XLAStrategy as X

fab = F(accelerator="tpu", devices=8, strategy=X(sync_module_states=True))
fab.launch()
m = fab.setup_module(torch.nn.Linear(3, 3))
o = fab.setup_optimizers(torch.optim.SGD(m.parameters(), lr=1.0))
