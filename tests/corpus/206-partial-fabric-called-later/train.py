import functools

import lightning as L
import torch

make_fabric = functools.partial(L.Fabric, strategy="deepspeed_stage_2")


def main():
    fabric = make_fabric(accelerator="cuda", devices=4, precision="bf16-mixed")
    fabric.launch()
    model = torch.nn.Linear(32, 32)
    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    optimizer = fabric.setup_optimizers(optimizer)


if __name__ == "__main__":
    main()
