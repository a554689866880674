import torch
import torch.nn as nn
from lightning.fabric import Fabric
from torch.utils.data import DataLoader, TensorDataset

fabric = Fabric(accelerator="cuda", devices=1, precision="bf16-mixed")
fabric.launch()

model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
model, optimizer = fabric.setup(model, optimizer)
loader = fabric.setup_dataloaders(DataLoader(TensorDataset(torch.randn(256, 32), torch.randint(0, 10, (256,))), batch_size=32))
criterion = nn.CrossEntropyLoss()

for epoch in range(3):
    for inputs, targets in loader:
        optimizer.zero_grad()
        logits = model(inputs)
        loss = criterion(logits, targets)
        loss.backward()
        optimizer.step()
    fabric.print(f"epoch {epoch}: {loss.item():.3f}")
