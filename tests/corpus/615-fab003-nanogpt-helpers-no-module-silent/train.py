import time
import torch
import lightning as L
from model import GPT

fabric = L.Fabric(accelerator="cuda", devices=8, strategy="ddp")
fabric.launch()
model = GPT()
model.crop_block_size(32)
optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
model, optimizer = fabric.setup(model, optimizer)
fabric.print(f"parameters: {model.get_num_params()}")
model.crop_block_size(16)
t0 = time.time()
for it in range(100):
    logits, loss = model(x, y)
    fabric.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
    mfu = model.estimate_mfu(12, time.time() - t0)
