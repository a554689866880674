import argparse
from functools import partial

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from lightning.fabric.strategies import XLAFSDPStrategy


class MNIST(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.fc = nn.Linear(1440, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        return F.log_softmax(self.fc(torch.flatten(x, 1)), dim=1)


def train_mnist(flags, fabric):
    torch.manual_seed(1)
    lr = flags.lr * fabric.world_size
    model = MNIST()
    optimizer = optim.SGD(model.parameters(), lr=lr, momentum=0.5)
    model, optimizer = fabric.setup(model, optimizer)
    loss_fn = nn.NLLLoss()
    for step in range(flags.steps):
        data, target = torch.randn(8, 1, 28, 28), torch.randint(0, 10, (8,))
        optimizer.zero_grad()
        loss = loss_fn(model(data), target)
        fabric.backward(loss)
        optimizer.step()


def main(flags):
    strategy = XLAFSDPStrategy(compute_dtype=getattr(torch, flags.compute_dtype), flatten_parameters=flags.flatten)
    fabric = L.Fabric(accelerator="tpu", devices=4, strategy=strategy)
    fabric.launch(partial(train_mnist, flags))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--compute_dtype", default="float32")
    parser.add_argument("--flatten", action="store_true")
    main(parser.parse_args())
