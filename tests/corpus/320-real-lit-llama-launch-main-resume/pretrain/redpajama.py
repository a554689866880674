import sys
from pathlib import Path
from typing import Optional

import lightning as L
import torch
from lightning.fabric.strategies import FSDPStrategy

from lit_llama.model import Block, LLaMA, LLaMAConfig

devices = 4
precision = "bf16-mixed"


def setup(resume: Optional[Path] = None) -> None:
    if devices > 1:
        strategy = FSDPStrategy(auto_wrap_policy={Block}, activation_checkpointing_policy={Block}, state_dict_type="full")
    else:
        strategy = "auto"
    fabric = L.Fabric(devices=devices, strategy=strategy, precision=precision)
    fabric.print("hparams")
    fabric.launch(main, resume=resume)


def main(fabric, resume) -> None:
    fabric.seed_everything(1337)
    with fabric.init_module(empty_init=True):
        model = LLaMA(LLaMAConfig.from_name("7B"))
    model = fabric.setup(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
    optimizer = fabric.setup_optimizers(optimizer)
    state = {"model": model, "optimizer": optimizer, "iter_num": 0}
    if resume:
        fabric.load(resume, state)
    for iter_num in range(10):
        logits = model(torch.randint(0, 100, (1, 32), device=fabric.device))
        loss = logits.mean()
        fabric.backward(loss)
        fabric.clip_gradients(model, optimizer, max_norm=1.0)
        optimizer.step()
        optimizer.zero_grad()
        if iter_num % 5 == 0:
            fabric.save(Path("out") / f"iter-{iter_num:06d}-ckpt.pth", state)


if __name__ == "__main__":
    from jsonargparse import CLI

    CLI(setup)
