import torch
import lightning as L
from model import GPT

fabric = L.Fabric(accelerator="cuda", devices=2, strategy="ddp")
fabric.launch()
model = fabric.setup(GPT())
model.eval()
with torch.no_grad():
    out = model.module.generate(torch.zeros((1, 1), dtype=torch.long, device=fabric.device), 100)
