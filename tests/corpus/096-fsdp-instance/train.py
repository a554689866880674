import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import FSDPStrategy

fabric = Fabric(strategy=FSDPStrategy(sharding_strategy="FULL_SHARD", cpu_offload=False), devices=8)
fabric.launch()
with fabric.init_module(empty_init=True):
    model = torch.nn.Transformer(d_model=512)
model = fabric.setup_module(model)
optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters()))
