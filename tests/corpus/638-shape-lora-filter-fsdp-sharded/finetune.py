from pathlib import Path

import lightning as L
import torch
from lightning.fabric.strategies import FSDPStrategy
from lit_gpt.lora import Block, GPT, lora_filter


def setup(devices: int = 1, precision: str = "bf16-true", out_dir: Path = Path("out/lora")):
    if devices > 1:
        strategy = FSDPStrategy(auto_wrap_policy={Block}, activation_checkpointing_policy={Block}, limit_all_gathers=True)
    else:
        strategy = "auto"
    fabric = L.Fabric(devices=devices, strategy=strategy, precision=precision)
    fabric.launch(main, out_dir)


def main(fabric: L.Fabric, out_dir: Path) -> None:
    model = fabric.setup_module(GPT(config()))
    optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters(), lr=3e-4))
    fit(fabric, model, optimizer)
    fabric.save(out_dir / "lit_model.pth.lora", {"model": model}, filter={"model": lora_filter})
