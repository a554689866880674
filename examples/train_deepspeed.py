"""DeepSpeed ZeRO-3 with the model and optimizer set up separately: FAB001 (error)."""

import torch
from lightning.fabric import Fabric

fabric = Fabric(accelerator="cuda", devices=8, strategy="deepspeed_stage_3")
fabric.launch()

model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 2))
model = fabric.setup_module(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)

for step in range(10):
    loss = model(torch.randn(16, 32, device=fabric.device)).sum()
    fabric.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
