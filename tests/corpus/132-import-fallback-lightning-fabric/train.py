import torch

try:
    from lightning.fabric import Fabric
    from lightning.fabric.strategies import DeepSpeedStrategy
except ImportError:
    from lightning_fabric import Fabric
    from lightning_fabric.strategies import DeepSpeedStrategy

fabric = Fabric(strategy=DeepSpeedStrategy(stage=2), devices=2)
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(4, 4))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
