import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset


def get_loaders(batch_size):
    train = TensorDataset(torch.randn(2048, 20), torch.randint(0, 3, (2048,)))
    val = TensorDataset(torch.randn(256, 20), torch.randint(0, 3, (256,)))
    return DataLoader(train, batch_size=batch_size, shuffle=True), DataLoader(val, batch_size=batch_size)


fabric = L.Fabric(accelerator="cuda", devices=2, strategy="ddp", precision="16-mixed")
train_loader, val_loader = get_loaders(64)
train_loader, val_loader = fabric.setup_dataloaders(train_loader, val_loader)
fabric.launch()

model = torch.nn.Sequential(torch.nn.Linear(20, 64), torch.nn.ReLU(), torch.nn.Linear(64, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
model, optimizer = fabric.setup(model, optimizer)
for x, y in train_loader:
    loss = torch.nn.functional.cross_entropy(model(x), y)
    fabric.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
