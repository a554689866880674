import os

import lightning as L
import torch
from torchvision.datasets import CIFAR10


def prepare(fabric, root="data"):
    with fabric.rank_zero_first(local=True):
        if not os.path.isdir(os.path.join(root, "cifar-10-batches-py")):
            CIFAR10(root, download=True)
            fabric.barrier()
    return CIFAR10(root, train=True)


def main(fabric):
    dataset = prepare(fabric)
    loader = fabric.setup_dataloaders(torch.utils.data.DataLoader(dataset, batch_size=128))
    model = fabric.setup(torch.nn.Linear(3072, 10))
    for x, y in loader:
        break


if __name__ == "__main__":
    fabric = L.Fabric(accelerator="cuda", devices=2, num_nodes=2, strategy="ddp")
    fabric.launch(main)
