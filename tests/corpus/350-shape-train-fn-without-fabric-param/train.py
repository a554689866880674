import lightning as L
import torch

fabric = L.Fabric(accelerator="cpu", strategy="ddp_spawn", devices=2)


def train():
    model = torch.nn.Linear(4, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = fabric.setup(model, optimizer)
    loss = model(torch.randn(2, 4)).sum()
    fabric.backward(loss)
    optimizer.step()


if __name__ == "__main__":
    fabric.launch(train)
