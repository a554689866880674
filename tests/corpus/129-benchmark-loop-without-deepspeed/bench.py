import torch
from lightning.fabric import Fabric

for strategy in ["ddp", "fsdp", "xla_fsdp"]:
    fabric = Fabric(strategy=strategy, devices=2)
    fabric.launch()
    model = fabric.setup_module(torch.nn.Linear(1024, 1024))
    optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
