"""PL006 VALID: the strategy as `strategy=`, the device as `accelerator=`."""

import os

import torch
from lightning.pytorch import LightningModule, Trainer
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Model(LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


trainer = Trainer(
    accelerator="cpu", strategy="ddp", devices=1,
    max_epochs=1, logger=False, enable_progress_bar=False, enable_model_summary=False,
    default_root_dir=os.path.join(os.getcwd(), "tmp"),
)
trainer.fit(Model(), DataLoader(TensorDataset(torch.randn(8, 4), torch.randn(8, 1)), batch_size=4))
print(f"RUNTIME-OK rank={trainer.global_rank}")
