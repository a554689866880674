import torch
from lightning.fabric import Fabric


class Trainer:
    def __init__(self):
        self.fabric = Fabric(strategy="deepspeed_stage_2", devices=2)
        self.optimizer_specs = []

    def setup_optimizers(self, *specs):
        """Record which optimizers to build (names and learning rates)."""
        self.optimizer_specs.extend(specs)

    def setup(self, model):
        self.fabric.launch()
        name, lr = self.optimizer_specs[0]
        optimizer = getattr(torch.optim, name)(model.parameters(), lr=lr)
        return self.fabric.setup(model, optimizer)
