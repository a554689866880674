"""PL003 INVALID: manual optimisation with Trainer(accumulate_grad_batches=None) (2.x compares it with 1)."""

import os

import torch
from lightning.pytorch import LightningModule, Trainer
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Model(LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.layer = nn.Linear(4, 1)

    def loss(self, batch):
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        opt.zero_grad()
        self.manual_backward(self.loss(batch))
        opt.step()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def loader():
    return DataLoader(TensorDataset(torch.randn(8, 4), torch.randn(8, 1)), batch_size=4)


trainer = Trainer(
    accelerator="cpu", devices=1, max_epochs=1, limit_val_batches=1, logger=False,
    enable_progress_bar=False, enable_model_summary=False, default_root_dir=os.path.join(os.getcwd(), "tmp"),
    accumulate_grad_batches=None,
)
trainer.fit(Model(), loader(), loader())
print(f"RUNTIME-OK rank={trainer.global_rank}")
