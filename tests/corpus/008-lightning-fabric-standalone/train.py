import torch
from lightning_fabric import Fabric
from lightning_fabric.strategies import DeepSpeedStrategy

fabric = Fabric(strategy=DeepSpeedStrategy(stage=2), devices=2)
fabric.launch()
model = torch.nn.GRU(16, 32)
model = fabric.setup(model)
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
