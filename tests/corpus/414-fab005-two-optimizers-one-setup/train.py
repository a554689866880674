import lightning as L
import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(32, 32)
        self.head = nn.Linear(32, 2)

    def forward(self, x):
        return self.head(self.encoder(x))


fabric = L.Fabric(accelerator="cuda", devices=2, strategy="deepspeed")
fabric.launch()
model = Model()
enc_opt = torch.optim.AdamW(model.encoder.parameters(), lr=1e-5)
head_opt = torch.optim.SGD(model.head.parameters(), lr=1e-2)
model, enc_opt, head_opt = fabric.setup(model, enc_opt, head_opt)
