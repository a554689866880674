import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DeepSpeedStrategy


def make_strategy(stage: int = 3):
    config = {"zero_optimization": {"stage": stage, "overlap_comm": True}}
    return DeepSpeedStrategy(config=config)


fabric = Fabric(strategy=make_strategy(), devices=8)
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(7, 7))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
