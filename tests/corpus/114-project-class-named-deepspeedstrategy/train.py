import torch
from lightning.fabric import Fabric

from config import DeepSpeedStrategy

settings = DeepSpeedStrategy(stage=3)
fabric = Fabric(strategy=settings.as_string(), devices=2)
fabric.launch()

model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
