import lightning as L
import torch


class BaseTrainer:
    def __init__(self, devices: int = 4):
        self.fabric = L.Fabric(accelerator="cuda", devices=devices, strategy=self._setup_strategy())

    def _setup_strategy(self):
        return "ddp"

    def fit(self, model: torch.nn.Module):
        self.fabric.launch()
        model = self.fabric.setup_module(model)
        optimizer = self.fabric.setup_optimizers(torch.optim.AdamW(model.parameters()))
        return model, optimizer
