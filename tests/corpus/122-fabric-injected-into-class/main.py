import torch
from lightning.fabric import Fabric

from trainer import Trainer

fabric = Fabric(strategy="deepspeed_stage_3", devices=4)
fabric.launch()
Trainer(fabric, max_steps=10).fit(torch.nn.Linear(4, 4))
