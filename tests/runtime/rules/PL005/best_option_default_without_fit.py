"""PL005 INVALID (a warning): `--ckpt_path` defaults to "best" and the evaluation script never
fits; its `ModelCheckpoint` is built beside the Trainer and handed to it alone. Run as shipped
(no arguments), `test` raises."""

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
parser.add_argument("--ckpt_path", default="best")
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
