import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DeepSpeedStrategy, XLAStrategy


def setup_model_and_optimizer(fabric: Fabric, model: torch.nn.Module, lr: float):
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    if isinstance(fabric.strategy, (DeepSpeedStrategy, XLAStrategy)):
        return fabric.setup(model, optimizer)
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(optimizer)
    return model, optimizer


fabric = Fabric(strategy="deepspeed_stage_3", devices=8)
fabric.launch()
setup_model_and_optimizer(fabric, torch.nn.Linear(3, 3), 1e-4)
