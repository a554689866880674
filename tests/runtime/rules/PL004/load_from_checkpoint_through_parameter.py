"""PL004 INVALID: load_from_checkpoint called on an instance that reaches a function as its parameter."""

import os

import torch
from lightning.pytorch import LightningModule, Trainer
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Model(LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 1)

    def loss(self, batch):
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def training_step(self, batch, batch_idx):
        return self.loss(batch)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def loader():
    return DataLoader(TensorDataset(torch.randn(8, 4), torch.randn(8, 1)), batch_size=4)


def restore(model, path):
    model = model.load_from_checkpoint(path)
    return model


trainer = Trainer(
    accelerator="cpu", devices=1, max_epochs=1, limit_val_batches=1, logger=False,
    enable_progress_bar=False, enable_model_summary=False, default_root_dir=os.path.join(os.getcwd(), "tmp"),
)
model = Model()
trainer.fit(model, loader())
path = os.path.join(trainer.default_root_dir, "model.ckpt")
trainer.save_checkpoint(path)
model = restore(Model(), path)
print(f"RUNTIME-OK rank={trainer.global_rank}")
