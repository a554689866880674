import lightning as L
import torch
import torch.nn.functional as F
from lightning import Fabric
from lightning.fabric.strategies import FSDPStrategy
from torchvision.models import ViT_B_16_Weights, vit_b_16

from local_utilities import get_dataloaders_cifar10


def train(num_epochs, model, optimizer, train_loader, fabric):
    for epoch in range(num_epochs):
        model.train()
        for features, targets in train_loader:
            loss = F.cross_entropy(model(features), targets)
            optimizer.zero_grad()
            fabric.backward(loss)
            optimizer.step()


if __name__ == "__main__":
    fabric = Fabric(accelerator="cuda", precision="bf16-mixed", devices=4, strategy=FSDPStrategy(use_orig_params=False))
    fabric.launch()
    L.seed_everything(123)

    train_loader, val_loader = get_dataloaders_cifar10(batch_size=16, num_workers=4)
    train_loader, val_loader = fabric.setup_dataloaders(train_loader, val_loader)

    model = vit_b_16(weights=ViT_B_16_Weights.IMAGENET1K_V1)
    model.heads.head = torch.nn.Linear(in_features=768, out_features=10)

    optimizer = torch.optim.Adam(model.parameters(), lr=5e-5)
    model, optimizer = fabric.setup(model, optimizer)

    train(num_epochs=3, model=model, optimizer=optimizer, train_loader=train_loader, fabric=fabric)
