import os

import lightning as L
import torch
from torch.utils.data import DataLoader, random_split
from torchvision import transforms
from torchvision.datasets import MNIST


class MNISTDataModule(L.LightningDataModule):
    def __init__(self, data_dir: str = "./MNIST", batch_size: int = 32):
        super().__init__()
        self.data_dir = data_dir
        self.batch_size = batch_size
        self.train_batch_idx = 0

    def prepare_data(self):
        MNIST(self.data_dir, train=True, download=True)

    def setup(self, stage: str):
        full = MNIST(self.data_dir, train=True, transform=transforms.ToTensor())
        self.train_set, self.val_set = random_split(full, [55000, 5000], generator=torch.Generator().manual_seed(42))

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=self.batch_size)

    def state_dict(self):
        return {"train_batch_idx": self.train_batch_idx}


def main(fabric: L.Fabric):
    data_module = MNISTDataModule()
    if fabric.global_rank == 0:
        data_module.prepare_data()
    fabric.barrier()

    data_module.setup("predict")
    train_dataloader = fabric.setup_dataloaders(data_module.train_dataloader())
    batches = iter(train_dataloader)
    for i in range(10):
        batch = next(batches)
        data_module.train_batch_idx = i
        print(batch[0])

    if fabric.global_rank == 0:
        fabric.save("data_checkpoint.ckpt", state=data_module)


if __name__ == "__main__":
    fabric = L.Fabric(accelerator="cpu", strategy="auto", devices=2, num_nodes=1, precision=32)
    fabric.launch(main)
