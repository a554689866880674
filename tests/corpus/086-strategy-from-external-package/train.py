import torch
from company_ml.distributed import default_strategy
from lightning.fabric import Fabric

fabric = Fabric(strategy=default_strategy(), devices=4)
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
