import torch
from lightning.fabric import Fabric

from train_utils import fit

fabric = Fabric(strategy="deepspeed_stage_2", devices=4)
fabric.launch()
fit(fabric, torch.nn.Linear(4, 4))
