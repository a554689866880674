import lightning as L
from lightning.fabric.strategies import FSDPStrategy


def setup(devices: int = 1, num_nodes: int = 1, precision: str = "bf16-mixed") -> None:
    fabric = L.Fabric(devices=4, num_nodes=num_nodes, strategy="fsdp", precision=precision)
    fabric.launch(main)


def main(fabric: L.Fabric) -> None:
    fabric.print("training")


if __name__ == "__main__":
    from jsonargparse import CLI

    CLI(setup)
