"""PL002 INVALID: a LightningCLI's trainer_defaults EarlyStopping(monitor="val_loss") while the model logs "val/loss"."""

import torch
from lightning.pytorch import LightningModule
from lightning.pytorch.callbacks import EarlyStopping
from lightning.pytorch.cli import LightningCLI
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Model(LightningModule):
    def __init__(self, lr: float = 0.1):
        super().__init__()
        self.lr = lr
        self.layer = nn.Linear(4, 1)

    def loss(self, batch):
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def training_step(self, batch, batch_idx):
        return self.loss(batch)

    def validation_step(self, batch, batch_idx):
        self.log("val/loss", self.loss(batch))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)

    def train_dataloader(self):
        return DataLoader(TensorDataset(torch.randn(8, 4), torch.randn(8, 1)), batch_size=4)

    def val_dataloader(self):
        return DataLoader(TensorDataset(torch.randn(4, 4), torch.randn(4, 1)), batch_size=4)


cli = LightningCLI(
    Model,
    save_config_callback=None,
    trainer_defaults={"callbacks": [EarlyStopping(monitor="val_loss")]},
    args=[
        "fit", "--trainer.accelerator=cpu", "--trainer.devices=1", "--trainer.max_epochs=1", "--trainer.logger=false",
        "--trainer.enable_progress_bar=false", "--trainer.enable_model_summary=false", "--trainer.enable_checkpointing=false",
    ],
)
print(f"RUNTIME-OK rank={cli.trainer.global_rank}")
