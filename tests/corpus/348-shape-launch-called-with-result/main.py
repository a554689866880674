import lightning as L
import torch
from lightning.fabric.loggers import CSVLogger


def run(fabric):
    fabric.seed_everything(42)
    model = torch.nn.Linear(10, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = fabric.setup(model, optimizer)
    for _ in range(10):
        loss = model(torch.randn(32, 10)).pow(2).mean()
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        fabric.log("loss", loss.item())


if __name__ == "__main__":
    fabric = L.Fabric(accelerator="cpu", devices=2, loggers=CSVLogger("logs"))
    fabric.launch(run(fabric))
