import lightning as L
from lightning.fabric.strategies import FSDPStrategy


def setup(devices: int = 1, num_nodes: int = 1, precision: str = "bf16-mixed") -> None:
    strategy = FSDPStrategy(state_dict_type="full", sharding_strategy="HYBRID_SHARD") if devices * num_nodes > 1 else "auto"
    fabric = L.Fabric(devices=devices, num_nodes=num_nodes, strategy=strategy, precision=precision)
    fabric.launch(main)


def main(fabric: L.Fabric) -> None:
    fabric.print("training")


if __name__ == "__main__":
    from jsonargparse import CLI

    CLI(setup)
