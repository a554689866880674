from pathlib import Path

import lightning as L
import torch
from lightning.fabric.strategies import FSDPStrategy
from litgpt.lora import Block, GPT, lora_filter, mark_only_lora_as_trainable


def setup(devices: int = 1, num_nodes: int = 1, precision: str = "bf16-true", out_dir: Path = Path("out/lora")):
    if devices * num_nodes > 1:
        strategy = FSDPStrategy(
            auto_wrap_policy={Block},
            activation_checkpointing_policy={Block},
            state_dict_type="full",
            limit_all_gathers=True,
            cpu_offload=False,
        )
    else:
        strategy = "auto"
    fabric = L.Fabric(devices=devices, num_nodes=num_nodes, strategy=strategy, precision=precision)
    fabric.launch(main, out_dir)


def main(fabric: L.Fabric, out_dir: Path) -> None:
    with fabric.init_module(empty_init=(fabric.world_size > 1)):
        model = GPT(config())
    mark_only_lora_as_trainable(model)
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters(), lr=3e-4))
    fit(fabric, model, optimizer)
    save_lora_checkpoint(fabric, model, out_dir / "final" / "lit_model.pth.lora")


def save_lora_checkpoint(fabric: L.Fabric, model: torch.nn.Module, file_path: Path) -> None:
    fabric.print(f"Saving LoRA weights to {str(file_path)!r}")
    fabric.save(file_path, {"model": model}, filter={"model": lora_filter})
