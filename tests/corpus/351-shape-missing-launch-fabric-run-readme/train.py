import argparse

import lightning as L
import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()
    fabric = L.Fabric(accelerator="cuda", devices=4, strategy="ddp")
    model = torch.nn.Linear(32, 32)
    optimizer = torch.optim.Adam(model.parameters())
    model, optimizer = fabric.setup(model, optimizer)
    for _ in range(args.epochs):
        loss = model(torch.randn(16, 32)).pow(2).mean()
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    main()
