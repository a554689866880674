import torch
from lightning.fabric import Fabric


class Trainer:
    def __init__(self, devices: int = 8):
        self.fabric = Fabric(strategy="deepspeed_stage_3", devices=devices, precision="bf16-mixed")
        self.fabric.launch()

    def fit(self, model: torch.nn.Module) -> None:
        model = self.fabric.setup_module(model)
        optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
        optimizer = self.fabric.setup_optimizers(optimizer)
        self.loop(model, optimizer)

    def loop(self, model, optimizer):
        pass
