import lightning as L
import torch

fabric = L.Fabric(accelerator="gpu", devices=4, strategy="ddp_notebook")
fabric.launch()

model = torch.nn.Linear(256, 2)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
model, optimizer = fabric.setup(model, optimizer)
for _ in range(100):
    loss = model(torch.randn(8, 256)).logsumexp(dim=-1).mean()
    fabric.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
