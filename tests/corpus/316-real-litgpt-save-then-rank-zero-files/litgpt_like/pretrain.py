from pathlib import Path
from typing import Optional

import lightning as L
import torch
from lightning.fabric.strategies import FSDPStrategy

from litgpt_like.model import GPT, Block
from litgpt_like.utils import copy_config_files, save_config, save_hyperparameters


def setup(devices: int = 1, tokenizer_dir: Optional[Path] = None, out_dir: Path = Path("out/pretrain")) -> None:
    if devices > 1:
        strategy = FSDPStrategy(auto_wrap_policy={Block}, state_dict_type="full", sharding_strategy="HYBRID_SHARD")
    else:
        strategy = "auto"
    fabric = L.Fabric(devices=devices, strategy=strategy, precision="bf16-mixed")
    fabric.launch()
    main(fabric, tokenizer_dir, out_dir)


def main(fabric: L.Fabric, tokenizer_dir, out_dir: Path) -> None:
    with fabric.init_module(empty_init=True):
        model = GPT.from_name("pythia-14m")
    model = fabric.setup(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=4e-4)
    optimizer = fabric.setup_optimizers(optimizer)
    state = {"model": model, "optimizer": optimizer, "iter_num": 0}
    for iter_num in range(100):
        loss = model(torch.randint(0, 100, (2, 16), device=fabric.device)).mean()
        fabric.backward(loss)
        fabric.clip_gradients(model, optimizer, max_norm=1.0)
        optimizer.step()
        optimizer.zero_grad()
        state["iter_num"] = iter_num
    save_checkpoint(fabric, state, tokenizer_dir, out_dir / "final" / "lit_model.pth")


def save_checkpoint(fabric, state, tokenizer_dir, checkpoint_file):
    model = state["model"]
    checkpoint_file.parent.mkdir(parents=True, exist_ok=True)
    fabric.print(f"Saving checkpoint to {str(checkpoint_file)!r}")
    fabric.save(checkpoint_file, state)
    if fabric.global_rank == 0:
        save_hyperparameters(setup, checkpoint_file.parent)
        if tokenizer_dir is not None:
            copy_config_files(tokenizer_dir, checkpoint_file.parent)
        save_config(model.config, checkpoint_file.parent)
