import argparse

import torch
from lightning.fabric import Fabric, seed_everything
from torch.utils.data import DataLoader
from torchvision.datasets import CIFAR10
import torchvision.transforms as tt

parser = argparse.ArgumentParser()
parser.add_argument("--data", default="./data")
parser.add_argument("--ckpt", required=True)
args = parser.parse_args()


def main():
    fabric = Fabric(accelerator="cuda", devices=[2, 3, 4, 5], strategy="ddp", precision="16-mixed")
    fabric.launch()
    seed_everything(42)
    test_dataset = CIFAR10(args.data, train=False, transform=tt.ToTensor(), download=True)
    loader = fabric.setup_dataloaders(DataLoader(test_dataset, batch_size=256))
    model = torch.load(args.ckpt)
    model = fabric.setup(model)
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            model(x)


if __name__ == "__main__":
    main()
