import torch
from lightning.fabric import Fabric


def main():
    fabric = Fabric(accelerator="cuda", devices=4, strategy="ddp", precision="32-true")
    fabric.launch()
    model = torch.nn.Linear(10, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    model, optimizer = fabric.setup(model, optimizer)
    for x, y in []:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    main()
