import click
import torch
from lightning.fabric import Fabric


@click.command()
@click.option("--strategy", type=click.Choice(["ddp", "deepspeed_stage_3"]), default="ddp")
@click.option("--devices", type=int, default=1)
def train(strategy, devices):
    fabric = Fabric(strategy=strategy, devices=devices)
    fabric.launch()
    model = fabric.setup_module(torch.nn.Linear(10, 10))
    optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))


if __name__ == "__main__":
    train()
