import torch
import lightning as L

fabric = L.Fabric(devices=8, strategy="DeepSpeed_Stage_3")
fabric.launch()

model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
model = fabric.setup_module(model)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
optimizer = fabric.setup_optimizers(optimizer)
