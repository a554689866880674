import argparse

import torch.nn.functional as F
import torch.optim as optim
from lightning.fabric import Fabric, seed_everything
from torch.optim.lr_scheduler import StepLR


def run(hparams):
    fabric = Fabric()
    seed_everything(hparams.seed)
    train_loader, test_loader = fabric.setup_dataloaders(*mnist_loaders(hparams))
    model = Net()
    optimizer = optim.Adadelta(model.parameters(), lr=hparams.lr)
    model, optimizer = fabric.setup(model, optimizer)
    scheduler = StepLR(optimizer, step_size=1, gamma=hparams.gamma)
    for epoch in range(1, hparams.epochs + 1):
        model.train()
        for data, target in train_loader:
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            fabric.backward(loss)
            optimizer.step()
        scheduler.step()
        if hparams.dry_run:
            break

    # When using distributed training, use `fabric.save`
    if hparams.save_model:
        fabric.save(model.state_dict(), "mnist_cnn.pt")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Fabric MNIST Example")
    parser.add_argument("--epochs", type=int, default=14)
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("--gamma", type=float, default=0.7)
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--save-model", action="store_true")
    run(parser.parse_args())
