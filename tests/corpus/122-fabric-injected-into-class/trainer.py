import torch


class Trainer:
    def __init__(self, fabric, max_steps=100):
        self.fabric = fabric
        self.max_steps = max_steps

    def fit(self, model):
        model = self.fabric.setup_module(model)
        optimizer = self.fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
        for _ in range(self.max_steps):
            pass
