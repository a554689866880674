"""PL005 VALID form of best_option_default_without_fit.py: `--ckpt_path` defaults to None (the
model in memory); a checkpoint path is given on the command line when one exists."""

import argparse
import os

import torch
from lightning.pytorch import LightningModule, Trainer
from lightning.pytorch.callbacks import ModelCheckpoint
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

    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self.loss(batch))

    def test_step(self, batch, batch_idx):
        self.log("test_loss", self.loss(batch))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def loader():
    return DataLoader(TensorDataset(torch.randn(8, 4), torch.randn(8, 1)), batch_size=4)


parser = argparse.ArgumentParser()
parser.add_argument("--ckpt_path", default=None)  # None: the weights in memory
args = vars(parser.parse_args())

checkpoint = ModelCheckpoint(monitor="val_loss", save_top_k=1)
trainer_args = {"callbacks": [checkpoint], "accelerator": "cpu", "devices": 1, "logger": False}
trainer = Trainer(
    **trainer_args, max_epochs=1, limit_val_batches=1, enable_progress_bar=False, enable_model_summary=False,
    default_root_dir=os.path.join(os.getcwd(), "tmp"),
)
model = Model()
trainer.test(model, loader(), ckpt_path=args["ckpt_path"])
print(f"RUNTIME-OK rank={trainer.global_rank} best={checkpoint.best_model_path!r}")
