import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import FSDPStrategy

fabric = Fabric(accelerator="cuda", devices=2, strategy=FSDPStrategy(use_orig_params=False))
fabric.launch()
model = torch.nn.Linear(8, 2)
model = fabric.setup_module(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)
