import argparse
import time

import torch
from lightning.fabric import Fabric


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--snapshot", default="snapshot.pt")
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()

    fabric = Fabric(accelerator="cuda", devices=4, strategy="ddp", precision="16-mixed")
    fabric.launch()
    model = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    lr_scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 10)
    model, optimizer = fabric.setup(model, optimizer)
    loader = fabric.setup_dataloaders(torch.utils.data.DataLoader(torch.randn(512, 32), batch_size=32))

    start_time = time.time()
    for epoch in range(args.epochs):
        for x in loader:
            loss = model(x).pow(2).mean()
            optimizer.zero_grad()
            fabric.backward(loss)
            optimizer.step()
        lr_scheduler.step()
        # Fabric writes on rank 0 only by default
        state = {"model": model, "optimizer": optimizer, "scheduler": lr_scheduler.state_dict(),
                 "last_epoch": epoch, "elapsed_time": time.time() - start_time}
        fabric.save(path=args.snapshot, state=state)
        print(f"[Epoch {epoch + 1}/{args.epochs}] Dumped snapshot at {args.snapshot}")
        fabric.barrier()


if __name__ == "__main__":
    main()
