import torch
from lightning.fabric import Fabric


def main():
    fabric = Fabric(accelerator="cuda", devices=8)
    fabric.launch()
    model = torch.nn.Linear(32, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = fabric.setup(model, optimizer)
    for _ in range(10):
        loss = model(torch.randn(8, 32, device=fabric.device)).sum()
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    main()
