from dataclasses import dataclass

import torch.nn as nn


@dataclass
class ModelArgs:
    vocab_size: int = 32000
    dim: int = 256


class Transformer(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.tok = nn.Embedding(args.vocab_size, args.dim)
        self.out = nn.Linear(args.dim, args.vocab_size)

    def init_weights(self):
        nn.init.normal_(self.tok.weight)

    def forward(self, x):
        return self.out(self.tok(x))
