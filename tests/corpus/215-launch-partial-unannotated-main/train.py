from functools import partial

import lightning as L
import torch


def main(fabric, cfg):
    model = torch.nn.Linear(cfg.width, cfg.width)
    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    optimizer = fabric.setup_optimizers(optimizer)


if __name__ == "__main__":
    from types import SimpleNamespace

    cfg = SimpleNamespace(width=64)
    fabric = L.Fabric(accelerator="tpu", devices=8)
    fabric.launch(partial(main, cfg=cfg))
