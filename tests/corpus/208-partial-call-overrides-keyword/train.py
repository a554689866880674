import functools

import lightning as L
import torch

DDPFabric = functools.partial(L.Fabric, accelerator="cuda", strategy="ddp")


def main():
    fabric = DDPFabric(devices=8, strategy="deepspeed")
    fabric.launch()
    model = torch.nn.Linear(32, 32)
    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    optimizer = fabric.setup_optimizers(optimizer)


if __name__ == "__main__":
    main()
