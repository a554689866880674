import lightning as L
from lightning.fabric.strategies import FSDPStrategy

devices = 4
micro_batch_size = 4


def main(data_dir: str = "data/alpaca") -> None:
    strategy = FSDPStrategy(activation_checkpointing=None)
    fabric = L.Fabric(accelerator="cuda", devices=devices, precision="bf16-mixed", strategy=strategy)
    fabric.launch()
    fabric.seed_everything(1337 + fabric.global_rank)


if __name__ == "__main__":
    from jsonargparse import CLI

    CLI(main)
