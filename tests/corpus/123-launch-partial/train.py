from functools import partial

import torch
import lightning as L


def train(fabric, cfg):
    model = fabric.setup_module(torch.nn.Linear(cfg["hidden"], cfg["hidden"]))
    optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
    return model, optimizer


if __name__ == "__main__":
    cfg = {"hidden": 128}
    fabric = L.Fabric(accelerator="tpu")
    fabric.launch(partial(train, cfg=cfg))
