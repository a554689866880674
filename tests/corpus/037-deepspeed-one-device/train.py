import torch
from lightning.fabric import Fabric

fabric = Fabric(accelerator="cuda", devices=1, strategy="deepspeed_stage_3_offload")
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
