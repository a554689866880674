import functools

import lightning as L
import torch


def main(fabric: L.Fabric, cfg: dict):
    model = torch.nn.Linear(cfg["width"], cfg["width"])
    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    optimizer = fabric.setup_optimizers(optimizer)


if __name__ == "__main__":
    cfg = {"width": 64}
    fabric = L.Fabric(accelerator="cuda", devices=4, strategy="deepspeed_stage_2")
    fabric.launch(functools.partial(main, cfg=cfg))
