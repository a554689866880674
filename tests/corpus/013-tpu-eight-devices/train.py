import torch
import lightning as L

fabric = L.Fabric(accelerator="tpu", devices=8, precision="bf16-true")
fabric.launch()
model = torch.nn.Linear(16, 4)
model = fabric.setup(model)
optimizer = torch.optim.AdamW(model.parameters())
optimizer = fabric.setup_optimizers(optimizer)
