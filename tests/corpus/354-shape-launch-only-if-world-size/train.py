import lightning as L
import torch


def main():
    fabric = L.Fabric(accelerator="cuda", devices=1, strategy="ddp", precision="bf16-mixed")
    if fabric.world_size > 1:
        fabric.launch()
    model = torch.nn.Linear(8, 8)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = fabric.setup(model, optimizer)
    return model, optimizer


if __name__ == "__main__":
    main()
