import os

import torch
from lightning.fabric import Fabric

NUM_GPUS = int(os.environ.get("NUM_GPUS", 4))


def main():
    fabric = Fabric(
        accelerator="gpu",
        devices=NUM_GPUS,
        strategy="ddp_sharded",
        precision="16-mixed",
    )
    fabric.launch()
    model = torch.nn.Linear(128, 128)
    optimizer = torch.optim.Adam(model.parameters())
    model, optimizer = fabric.setup(model, optimizer)


if __name__ == "__main__":
    main()
