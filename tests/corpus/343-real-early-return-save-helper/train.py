import torch
from lightning.fabric import Fabric

from utils.checkpoint import load_checkpoint, save_checkpoint


def main():
    fabric = Fabric(accelerator="gpu", devices=4, strategy="ddp", precision="bf16-mixed")
    fabric.launch()
    model = torch.nn.Linear(64, 64)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model, optimizer = fabric.setup(model, optimizer)
    start = load_checkpoint(fabric, model, "checkpoints/last.ckpt")["epoch"]
    for epoch in range(start, 10):
        loss = model(torch.randn(32, 64, device=fabric.device)).pow(2).mean()
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        save_checkpoint(fabric, model, optimizer, epoch, "checkpoints/last.ckpt")


if __name__ == "__main__":
    main()
