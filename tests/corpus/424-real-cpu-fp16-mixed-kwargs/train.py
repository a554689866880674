import lightning as L
import torch

fabric_kwargs = {"accelerator": "cpu", "devices": 1, "precision": "16-mixed"}


def train():
    fabric = L.Fabric(**fabric_kwargs)
    fabric.seed_everything(1234)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = fabric.setup(model, optimizer)
    for _ in range(3):
        loss = model(torch.randn(8, 32)).sum()
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    train()
