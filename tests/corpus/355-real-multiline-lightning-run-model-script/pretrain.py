import lightning as L
import torch
from lightning.fabric.strategies import XLAStrategy


def setup(devices: int = 8, tpu: bool = True):
    strategy = XLAStrategy(sync_module_states=False) if tpu else "ddp"
    fabric = L.Fabric(devices=devices, strategy=strategy, precision="bf16-true")
    main(fabric)


def main(fabric):
    loader = fabric.setup_dataloaders(torch.utils.data.DataLoader(list(range(32)), batch_size=4))
    model = fabric.setup(torch.nn.Linear(1, 1))
    for _ in loader:
        pass
    return model


if __name__ == "__main__":
    setup()
