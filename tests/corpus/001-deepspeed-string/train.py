import torch
from lightning.fabric import Fabric


def main():
    fabric = Fabric(accelerator="cuda", devices=4, strategy="deepspeed", precision="bf16-mixed")
    fabric.launch()
    model = torch.nn.Linear(128, 10)
    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    optimizer = fabric.setup_optimizers(optimizer)
    for _ in range(10):
        loss = model(torch.randn(4, 128, device=fabric.device)).sum()
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    main()
