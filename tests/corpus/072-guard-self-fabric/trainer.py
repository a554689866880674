import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DeepSpeedStrategy, XLAStrategy


class Trainer:
    def __init__(self, strategy="deepspeed"):
        self.fabric = Fabric(strategy=strategy, devices=2)

    def setup(self, model, optimizer):
        if isinstance(self.fabric.strategy, (DeepSpeedStrategy, XLAStrategy)):
            return self.fabric.setup(model, optimizer)
        else:
            model = self.fabric.setup_module(model)
            return model, self.fabric.setup_optimizers(optimizer)
