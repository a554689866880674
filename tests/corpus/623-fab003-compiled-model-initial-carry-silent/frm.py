import torch
from torch import nn


class FRMWrapper(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.hidden = config.hidden
        self.core = nn.Linear(config.hidden, config.hidden)
        self.head = nn.Linear(config.hidden, config.vocab)

    def initial_carry(self, batch):
        batch_size = batch["inputs"].shape[0]
        return {"z": torch.zeros(batch_size, self.hidden), "halted": torch.ones(batch_size, dtype=torch.bool)}

    def forward(self, carry, batch):
        z = self.core(carry["z"] + batch["inputs"])
        return {"carry": {"z": z, "halted": carry["halted"]}, "logits": self.head(z)}
