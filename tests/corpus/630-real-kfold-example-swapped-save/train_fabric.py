import argparse

import torch
import torch.nn as nn
import torch.optim as optim
from lightning.fabric import Fabric, seed_everything
from sklearn import model_selection


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)

    def forward(self, x):
        return self.fc(x.flatten(1))


def run(hparams):
    # strategy, devices … come from `fabric run`
    fabric = Fabric()
    seed_everything(hparams.seed)
    dataset = build_dataset()
    kfold = model_selection.KFold(n_splits=5)
    for fold, (train_ids, val_ids) in enumerate(kfold.split(dataset)):
        train_loader, val_loader = fabric.setup_dataloaders(*loaders(dataset, train_ids, val_ids))
        model = Net()
        optimizer = optim.Adadelta(model.parameters(), lr=hparams.lr)
        model, optimizer = fabric.setup(model, optimizer)
        for epoch in range(1, hparams.epochs + 1):
            train_one_epoch(fabric, model, train_loader, optimizer)
    if hparams.save_model:
        fabric.save(model.state_dict(), "mnist_cnn.pt")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=14)
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--save-model", action="store_true", default=False)
    run(parser.parse_args())
