import argparse

import torch
import lightning as L
from lightning.fabric.strategies import DDPStrategy, XLAStrategy


def train(fabric: L.Fabric, lr: float) -> None:
    model = torch.nn.Linear(32, 2)
    model = fabric.setup(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    optimizer = fabric.setup_optimizers(optimizer)
    for _ in range(10):
        loss = model(torch.randn(8, 32, device=fabric.device)).sum()
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--tpu", action="store_true")
    args = parser.parse_args()
    if args.tpu:
        strategy = XLAStrategy()
    else:
        strategy = DDPStrategy(find_unused_parameters=False)
    fabric = L.Fabric(strategy=strategy, devices=8)
    fabric.launch(train, 1e-3)
