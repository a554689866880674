import argparse
import torch
import lightning as L
from model import GPT

parser = argparse.ArgumentParser()
parser.add_argument("--strategy", choices=["auto", "ddp", "fsdp"], default="auto")
parser.add_argument("--devices", type=int, default=1)
args = parser.parse_args()

fabric = L.Fabric(accelerator="cuda", devices=1, strategy=args.strategy)
fabric.launch()
model = GPT()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
model, optimizer = fabric.setup(model, optimizer)
print(model.generate(torch.zeros((1, 1), dtype=torch.long, device=fabric.device), 50))
