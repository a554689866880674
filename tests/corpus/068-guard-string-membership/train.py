import click
import torch
from lightning.fabric import Fabric


@click.command()
@click.option("--strategy", type=click.Choice(["ddp", "deepspeed", "xla"]), default="ddp")
def main(strategy):
    fabric = Fabric(strategy=strategy)
    fabric.launch()
    model = torch.nn.Linear(3, 3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if strategy in ("deepspeed", "xla"):
        model, optimizer = fabric.setup(model, optimizer)
    else:
        model = fabric.setup_module(model)
        optimizer = fabric.setup_optimizers(optimizer)


if __name__ == "__main__":
    main()
