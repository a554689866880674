import torch
from torch import nn
import lightning as L


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(128, 256), nn.GELU(), nn.Linear(256, 64))

    def forward(self, x, y):
        return nn.functional.mse_loss(self.backbone(x), y)

    @torch.no_grad()
    def encode(self, x):
        return nn.functional.normalize(self.backbone(x), dim=-1)


fabric = L.Fabric(accelerator="cuda", devices=1, precision="bf16-mixed")
model = Encoder()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
model, optimizer = fabric.setup(torch.compile(model), optimizer)
for x, y in loader:
    fabric.backward(model(x, y))
    optimizer.step()
    optimizer.zero_grad()
embeddings = model.encode(queries)
