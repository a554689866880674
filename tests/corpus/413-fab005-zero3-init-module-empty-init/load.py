import lightning as L
import torch
from lightning.fabric.strategies import DeepSpeedStrategy


def build(checkpoint_path: str):
    strategy = DeepSpeedStrategy(stage=3, offload_optimizer=True, offload_parameters=True)
    fabric = L.Fabric(accelerator="cuda", devices=4, strategy=strategy, precision="bf16-true")
    fabric.launch()
    with fabric.init_module(empty_init=False):
        model = torch.nn.Linear(4096, 4096)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    model, optimizer = fabric.setup(model, optimizer)
    fabric.load(checkpoint_path, {"model": model})
    return fabric, model, optimizer
