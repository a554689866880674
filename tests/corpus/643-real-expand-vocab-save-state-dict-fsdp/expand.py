from pathlib import Path

import lightning as L
from lightning.fabric.strategies import FSDPStrategy
from litgpt.model import GPT, Block


def save_model(fabric: L.Fabric, model: GPT, save_path: Path) -> None:
    """Save the model checkpoint in bfloat16 precision."""
    save_path.parent.mkdir(parents=True, exist_ok=True)
    fabric.save(save_path, model.state_dict())
    fabric.print(f"Model saved at {save_path}")


def main(devices: int = 4):
    fabric = L.Fabric(devices=devices, strategy=FSDPStrategy(auto_wrap_policy={Block}), precision="bf16-true")
    fabric.launch()
    with fabric.init_module(empty_init=False):
        model = GPT(config())
    model = fabric.setup(model)
    expand_embeddings(model)
    save_model(fabric, model, Path("out/expanded/lit_model.pth"))
