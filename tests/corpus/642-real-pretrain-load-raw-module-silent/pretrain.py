from pathlib import Path
from typing import Optional

import lightning as L
import torch
from lightning.fabric.strategies import FSDPStrategy
from litgpt.model import GPT, Block


def main(devices: int, initial_checkpoint_dir: Optional[Path], out_dir: Path):
    strategy = FSDPStrategy(auto_wrap_policy={Block}, state_dict_type="full", sharding_strategy="HYBRID_SHARD")
    fabric = L.Fabric(devices=devices, strategy=strategy, precision="bf16-mixed")
    fabric.launch()
    with fabric.init_module(empty_init=True):
        model = GPT(config())
    model = fabric.setup(model)
    optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters(), lr=4e-4))
    train_dataloader = fabric.setup_dataloaders(loader())

    if initial_checkpoint_dir:
        fabric.load_raw(initial_checkpoint_dir / "lit_model.pth", model)

    state = {
        "model": model,
        "optimizer": optimizer,
        "train_dataloader": train_dataloader,
        "iter_num": 0,
        "step_count": 0,
    }
    fit(fabric, state)
    fabric.save(out_dir / "final" / "lit_model.pth", state)
