import torch
import yaml
from lightning.fabric import Fabric


def main(path="config.yaml"):
    with open(path) as fh:
        cfg = yaml.safe_load(fh)
    fabric = Fabric(strategy=cfg["strategy"], devices=cfg["devices"])
    fabric.launch()
    model = fabric.setup_module(torch.nn.Linear(10, 10))
    optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
    return model, optimizer
