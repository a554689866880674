import torch
from lightning.fabric import Fabric


class Engine:
    def __init__(self):
        self.fabric = Fabric(strategy="ddp", devices=2)

    def enable_deepspeed(self):
        self.fabric = Fabric(strategy="deepspeed_stage_2", devices=2)

    def train(self, model):
        self.fabric.launch()
        model = self.fabric.setup_module(model)
        optimizer = self.fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
        return model, optimizer
