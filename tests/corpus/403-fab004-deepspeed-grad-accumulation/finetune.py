import lightning as L
import torch

GRAD_ACCUM = 8

fabric = L.Fabric(accelerator="gpu", devices=2, strategy="deepspeed_stage_2", precision="16-mixed")
fabric.launch()

model = torch.nn.Linear(128, 2)
optimizer = torch.optim.Adam(model.parameters(), lr=2e-5)
model, optimizer = fabric.setup(model, optimizer)

for step, (x, y) in enumerate([]):
    out = model(x)
    loss = torch.nn.functional.cross_entropy(out, y) / GRAD_ACCUM
    loss.backward()
    if (step + 1) % GRAD_ACCUM == 0:
        optimizer.step()
        optimizer.zero_grad()
