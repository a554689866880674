import torch
from torch import nn
import lightning as L


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.GRU(32, 64, batch_first=True)
        self.decoder = nn.GRUCell(32, 64)
        self.out = nn.Linear(64, 32)

    def forward(self, src, tgt):
        _, h = self.encoder(src)
        return self.out(h[-1])

    def greedy_decode(self, src, steps):
        _, h = self.encoder(src)
        h = h[-1]
        y = torch.zeros(src.size(0), 32, device=src.device)
        outputs = []
        for _ in range(steps):
            h = self.decoder(y, h)
            y = self.out(h)
            outputs.append(y)
        return torch.stack(outputs, 1)


fabric = L.Fabric(accelerator="cuda", devices=2, strategy="dp")
model = Seq2Seq()
optimizer = torch.optim.Adam(model.parameters())
model, optimizer = fabric.setup(model, optimizer)
predictions = model.greedy_decode(src, 20)
