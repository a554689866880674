import argparse

import torch
from lightning.fabric import Fabric
from lightning.fabric.utilities import rank_zero_only


@rank_zero_only
def log_validation(model, batch):
    with torch.no_grad():
        print(model(batch).mean())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--strategy", choices=["ddp", "deepspeed_stage_2", "deepspeed_stage_3"], default="ddp")
    args = parser.parse_args()
    fabric = Fabric(accelerator="cuda", devices=8, strategy=args.strategy)
    fabric.launch()
    model = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    optimizer = torch.optim.Adam(model.parameters())
    model, optimizer = fabric.setup(model, optimizer)
    batch = torch.randn(4, 32, device=fabric.device)
    for _ in range(10):
        loss = model(batch).mean()
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
    log_validation(model, batch)


if __name__ == "__main__":
    main()
