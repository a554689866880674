from pathlib import Path
from typing import Optional, Union

import lightning as L
from litgpt.model import GPT, Config
from litgpt.utils import parse_devices


def setup(model_name: str, initial_checkpoint_dir: Optional[Path] = Path("out/step-00010000"),
          devices: Union[int, str] = "auto", precision: Optional[str] = None):
    devices = parse_devices(devices)
    strategy = "auto"
    fabric = L.Fabric(devices=devices, strategy=strategy, precision=precision)
    fabric.launch()
    with fabric.init_module(empty_init=True):
        model = GPT(Config.from_name(model_name))
    model = fabric.setup(model)

    checkpoint_path = initial_checkpoint_dir / "lit_model.pth"
    state = fabric.load(checkpoint_path)
    if "model" in state:
        model.load_state_dict(state["model"])
    else:
        model.load_state_dict(state)
    model.eval()
