import torch
from lightning.fabric import Fabric

fabric = Fabric(accelerator="cuda", devices=4, strategy="fsdp")
fabric.launch()
with torch.device("meta"):
    model = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(512, 8), num_layers=6)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
model, optimizer = fabric.setup(model, optimizer)
