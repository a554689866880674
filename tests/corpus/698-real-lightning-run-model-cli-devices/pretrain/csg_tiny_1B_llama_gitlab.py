import lightning as L
from lightning.fabric.strategies import FSDPStrategy

num_of_devices = 8


def setup(devices: int = 8, precision: str = "bf16-mixed") -> None:
    if devices > 1:
        strategy = FSDPStrategy(state_dict_type="full", limit_all_gathers=True, cpu_offload=False)
    else:
        strategy = "auto"
    fabric = L.Fabric(devices=devices, strategy=strategy, precision=precision)
    main(fabric)


def main(fabric):
    fabric.print("training")


if __name__ == "__main__":
    from jsonargparse import CLI

    CLI(setup)
