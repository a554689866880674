import sys
import torch
from torch import nn
import lightning as L


class Solver(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(16, 16)

    def forward(self, x):
        return self.net(x)

    def train_step(self, batch):
        out = self.net(batch)
        return out.pow(2).mean(), out.sum(-1)


def main(cfg):
    fabric_kwargs = {"accelerator": "cuda", "devices": cfg.devices, "strategy": "ddp"}
    fabric = L.Fabric(**fabric_kwargs)
    fabric.seed_everything(cfg.seed)
    fabric.launch()
    model = Solver()
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    model, optimizer = fabric.setup(model, optimizer)
    model.mark_forward_method("train_step")
    total = sum(p.numel() for p in model.parameters() if p.requires_grad)
    min_energy = sys.maxsize
    for epoch in range(cfg.max_iters):
        optimizer.zero_grad()
        loss, energies = model.train_step(batch)
        fabric.backward(loss)
        optimizer.step()
