import argparse

import lightning as L
import torch
import torch.nn as nn
from lightning.fabric.strategies import FSDPStrategy


class Block(nn.Module):
    def __init__(self, n_embd):
        super().__init__()
        self.fc = nn.Linear(n_embd, n_embd)

    def forward(self, x):
        return self.fc(x)


class GPT(nn.Module):
    def __init__(self, n_layer, n_embd):
        super().__init__()
        self.blocks = nn.ModuleList(Block(n_embd) for _ in range(n_layer))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def setup(devices: int, lr: float) -> None:
    if devices > 1:
        strategy = FSDPStrategy(auto_wrap_policy={Block}, state_dict_type="full", sharding_strategy="HYBRID_SHARD")
    else:
        strategy = "auto"
    fabric = L.Fabric(devices=devices, strategy=strategy, precision="bf16-true")
    fabric.launch()
    main(fabric, lr)


def main(fabric: L.Fabric, lr: float) -> None:
    fabric.seed_everything(1337)
    with fabric.init_module(empty_init=True):
        model = GPT(n_layer=4, n_embd=64)

    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    model, optimizer = fabric.setup(model, optimizer)

    for _ in range(10):
        loss = model(torch.randn(2, 64, device=fabric.device)).pow(2).mean()
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--devices", type=int, default=1)
    parser.add_argument("--lr", type=float, default=4e-4)
    args = parser.parse_args()
    setup(args.devices, args.lr)
