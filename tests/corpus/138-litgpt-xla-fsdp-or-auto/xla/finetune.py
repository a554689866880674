import lightning as L
import torch
from lightning.fabric.accelerators import XLAAccelerator
from lightning.fabric.strategies import XLAFSDPStrategy


def setup(precision: str = "bf16-true") -> None:
    devices = XLAAccelerator.auto_device_count()
    strategy = XLAFSDPStrategy(auto_wrap_policy={torch.nn.TransformerEncoderLayer}) if devices > 1 else "auto"
    fabric = L.Fabric(devices=devices, strategy=strategy, precision=precision)
    fabric.launch(main)


def main(fabric: L.Fabric) -> None:
    model = torch.nn.TransformerEncoderLayer(d_model=128, nhead=2)
    model = fabric.setup_module(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=3e-3)
    optimizer = fabric.setup_optimizers(optimizer)
