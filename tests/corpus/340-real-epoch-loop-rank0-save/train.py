import argparse

import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset


def build_model():
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 2))


def train(fabric, model, optimizer, loader, epochs, save_every):
    for epoch in range(epochs):
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            fabric.backward(loss)
            optimizer.step()
        fabric.print(f"epoch {epoch}: loss {loss.item():.4f}")
        if epoch % save_every == 0:
            if fabric.global_rank == 0:
                fabric.save(f"checkpoints/epoch-{epoch}.ckpt", {"model": model, "optimizer": optimizer, "epoch": epoch})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--save-every", type=int, default=2)
    args = parser.parse_args()

    fabric = L.Fabric(accelerator="cuda", devices=4, strategy="ddp", precision="bf16-mixed")
    fabric.launch()
    model = build_model()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model, optimizer = fabric.setup(model, optimizer)
    data = TensorDataset(torch.randn(1024, 32), torch.randint(0, 2, (1024,)))
    loader = fabric.setup_dataloaders(DataLoader(data, batch_size=64, shuffle=True))
    train(fabric, model, optimizer, loader, args.epochs, args.save_every)


if __name__ == "__main__":
    main()
