import torch
import torchvision
from lightning.fabric import Fabric

from losses import compute_loss


def run(fabric: Fabric, epochs: int) -> None:
    model = torchvision.models.resnet18(num_classes=10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model, optimizer = fabric.setup(model, optimizer)
    loader = fabric.setup_dataloaders(torch.utils.data.DataLoader([], batch_size=64))
    for epoch in range(epochs):
        for batch in loader:
            optimizer.zero_grad(set_to_none=True)
            loss = compute_loss(model, batch)
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    fabric = Fabric(accelerator="gpu", devices=1, precision="16-mixed")
    fabric.launch(run, 10)
