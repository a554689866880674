import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset

from lightning.fabric.strategies import FSDPStrategy


def setup(devices: int = 8) -> None:
    strategy = FSDPStrategy(state_dict_type="full", limit_all_gathers=True) if devices > 1 else "auto"
    fabric = L.Fabric(devices=devices, strategy=strategy, precision="bf16-mixed")
    # fabric.launch(main)
    main(fabric)


def main(fabric):
    data = TensorDataset(torch.randn(64, 16), torch.randn(64, 1))
    loader = fabric.setup_dataloaders(DataLoader(data, batch_size=8))
    model = fabric.setup(torch.nn.Linear(16, 1))
    for x, y in loader:
        fabric.backward(torch.nn.functional.mse_loss(model(x), y))


if __name__ == "__main__":
    setup()
