from pathlib import Path

import lightning as L
from lightning.fabric.strategies import FSDPStrategy
from utils.save import save_checkpoint


def main(devices: int = 1):
    strategy = FSDPStrategy(auto_wrap_policy={Block}) if devices > 1 else "auto"
    fabric = L.Fabric(devices=devices, strategy=strategy, precision="bf16-mixed")
    fabric.launch()
    model, optimizer = fabric.setup(build(), build_optimizer())
    train(fabric, model, optimizer)
    save_checkpoint(fabric, model, Path("out") / "final.pth")
