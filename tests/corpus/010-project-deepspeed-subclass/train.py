import torch
from lightning.fabric import Fabric

from strategies import ClusterDeepSpeed

fabric = Fabric(strategy=ClusterDeepSpeed(offload_optimizer=True), devices=8)
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(8, 8))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
