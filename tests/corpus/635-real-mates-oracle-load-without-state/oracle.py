from pathlib import Path
from typing import Union

import lightning as L
from lightning.fabric.strategies import FSDPStrategy
from litgpt.model import GPT, Block, Config
from litgpt.utils import instantiate_torch_optimizer, parse_devices


def setup(model_name: str, out_dir: Path = Path("out/oracle"), resume: Union[bool, Path] = False,
          devices: Union[int, str] = "auto", precision: str = "bf16-mixed", resume_steps: int = 0):
    devices = parse_devices(devices)
    if devices > 1:
        strategy = FSDPStrategy(
            auto_wrap_policy={Block},
            activation_checkpointing_policy={Block},
            # state_dict_type="full",
            limit_all_gathers=True,
            sharding_strategy="HYBRID_SHARD",
        )
    else:
        strategy = "auto"
    fabric = L.Fabric(devices=devices, strategy=strategy, precision=precision)
    fabric.launch()
    main(fabric, Config.from_name(model_name), out_dir, resume, resume_steps)


def main(fabric: L.Fabric, config: Config, out_dir: Path, resume, resume_steps: int) -> None:
    with fabric.init_module(empty_init=True):
        model = GPT(config)
    model = fabric.setup(model)
    optimizer = instantiate_torch_optimizer("AdamW", model.parameters())
    optimizer = fabric.setup_optimizers(optimizer)

    if resume_steps > 0:
        resume = out_dir / f"step-{resume_steps:08d}/lit_model.pth"
    state = fabric.load(resume)

    for train_data in batches():
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        fit(fabric, {"model": model, "optimizer": optimizer}, train_data)


if __name__ == "__main__":
    from jsonargparse import CLI

    CLI(setup)
