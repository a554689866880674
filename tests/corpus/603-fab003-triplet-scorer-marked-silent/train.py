import torch
from torch import nn
from lightning.fabric import Fabric


class TripletScorer(nn.Module):
    def __init__(self, dim=128):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))

    def forward(self, x):
        return self.encoder(x)

    def score_triplet(self, anchor, positive, negative):
        a, p, n = self.encoder(anchor), self.encoder(positive), self.encoder(negative)
        return (a - p).pow(2).sum(-1) - (a - n).pow(2).sum(-1)

    def print_summary(self):
        print(sum(p.numel() for p in self.parameters()))


def main(config):
    fabric = Fabric(strategy="ddp", devices=config.devices, accelerator="gpu")
    fabric.launch()
    model = TripletScorer()
    model = fabric.setup(model)
    # one marked forward method that scores the whole triplet: DDP sees a single forward per iteration
    model.mark_forward_method("score_triplet")
    model.print_summary()
    optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters(), lr=1e-4))
    for anchor, positive, negative in loader:
        loss = torch.relu(model.score_triplet(anchor, positive, negative) + 0.2).mean()
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
