import torch
import lightning as L

fabric = L.Fabric(accelerator="cuda", devices=4, precision="bf16-mixed")
fabric.launch()

model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
