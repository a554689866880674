import torch
from torch import nn
from lightning.fabric import Fabric


class TextEncoder(nn.Module):
    def __init__(self, vocab=30000, dim=256):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, ids, labels):
        return nn.functional.cross_entropy(self.proj(self.embed(ids)).mean(1), labels)

    def encode(self, ids):
        return self.proj(self.embed(ids)).mean(1)


class ContrastiveTrainer:
    def __init__(self):
        self.fabric = Fabric(accelerator="cuda", devices=8, strategy="deepspeed_stage_2", precision="bf16-mixed")
        self.fabric.launch()

    def setup(self):
        model = TextEncoder()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        self.model, self.optimizer = self.fabric.setup(model, optimizer)

    def embed_corpus(self, loader):
        self.model.eval()
        with torch.no_grad():
            return torch.cat([self.model.encode(ids) for ids in loader])
