import lightning as L
import torch

fabric = L.Fabric(accelerator="cuda", devices=8, strategy="deepspeed_stage_3", precision="bf16-mixed")
fabric.launch()
with fabric.init_module():
    model = torch.nn.Transformer(d_model=512)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.1)
model, optimizer = fabric.setup(model, optimizer)

for step, (src, tgt) in enumerate([]):
    out = model(src, tgt)
    loss = out.float().pow(2).mean()
    fabric.backward(loss)
    fabric.clip_gradients(model, optimizer, max_norm=1.0)
    optimizer.step()
    optimizer.zero_grad()
