from typing import Literal, Union

import lightning as L
import torch
from lightning.fabric.strategies import DeepSpeedStrategy, FSDPStrategy
from jsonargparse import CLI

from whittle_like.models import SuperNet


def setup(devices: int = 1, strategy: Literal["auto", "fsdp", "deepspeed"] = "auto", max_norm: float = 1.0) -> None:
    if strategy == "fsdp":
        fabric_strategy: Union[str, FSDPStrategy, DeepSpeedStrategy] = FSDPStrategy(state_dict_type="full")
    elif strategy == "deepspeed":
        fabric_strategy = DeepSpeedStrategy(stage=2)
    else:
        fabric_strategy = "auto"
    fabric = L.Fabric(devices=devices, strategy=fabric_strategy, precision="bf16-mixed")
    fabric.launch(main, max_norm)


def main(fabric: L.Fabric, max_norm: float) -> None:
    model = SuperNet()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    model, optimizer = fabric.setup(model, optimizer)
    for step in range(1000):
        loss = model(torch.randn(4, 128, device=fabric.device)).mean()
        fabric.backward(loss)
        if not isinstance(fabric.strategy, DeepSpeedStrategy):
            fabric.clip_gradients(model, optimizer, max_norm=max_norm)
        optimizer.step()
        optimizer.zero_grad()
    fabric.save("out/final.pth", {"model": model})


if __name__ == "__main__":
    CLI(setup)
