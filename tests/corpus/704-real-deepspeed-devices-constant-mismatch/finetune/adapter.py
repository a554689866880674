import lightning as L
from lightning.fabric.strategies import DeepSpeedStrategy

devices = 4
ds_config = {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}}


def main(data_dir: str = "data/alpaca") -> None:
    fabric = L.Fabric(
        accelerator="cuda",
        devices=devices,
        strategy=(DeepSpeedStrategy(config=ds_config) if devices > 1 else "auto"),
        precision="bf16-true",
    )
    fabric.launch()


if __name__ == "__main__":
    main()
