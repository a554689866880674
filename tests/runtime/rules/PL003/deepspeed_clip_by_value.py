"""PL003 INVALID: Trainer(gradient_clip_algorithm="value") under DeepSpeed (the CPU test subclass; automatic optimisation, one optimizer)."""

import os

import torch
from lightning.pytorch import LightningModule, Trainer
from lightning.pytorch.strategies import DDPStrategy, DeepSpeedStrategy
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class CPUDeepSpeedStrategy(DeepSpeedStrategy):
    def setup_environment(self) -> None:
        DDPStrategy.setup_environment(self)  # skips only the "CUDA GPUs only" guard


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


trainer = Trainer(
    accelerator="cpu", devices=1, max_epochs=1,
    strategy=CPUDeepSpeedStrategy(stage=2, parallel_devices=[torch.device("cpu", 0)]), limit_val_batches=1, logger=False,
    gradient_clip_val=1.0, gradient_clip_algorithm="value",
    enable_progress_bar=False, enable_model_summary=False, default_root_dir=os.path.join(os.getcwd(), "tmp"),
)
trainer.fit(Model(), loader(), loader())
print(f"RUNTIME-OK rank={trainer.global_rank}")
