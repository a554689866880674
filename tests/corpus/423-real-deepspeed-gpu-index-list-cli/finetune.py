import argparse

import lightning as L
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--deepspeed", action="store_true")
parser.add_argument("--lr", type=float, default=3e-4)
args = parser.parse_args()


def main(fabric: L.Fabric) -> None:
    model = torch.nn.Linear(16, 16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    model, optimizer = fabric.setup(model, optimizer)
    for _ in range(10):
        loss = model(torch.randn(4, 16, device=fabric.device)).sum()
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    strategy = "deepspeed_stage_2" if args.deepspeed else "ddp"
    fabric = L.Fabric(
        accelerator="cuda",
        devices=[4, 5, 6, 7],
        strategy=strategy,
        precision="bf16-mixed",
    )
    fabric.launch(main)
