import lightning as L
import torch
from jsonargparse import CLI


def main(devices: int = 4, strategy: str = "deepspeed_stage_3", lr: float = 3e-4) -> None:
    fabric = L.Fabric(accelerator="cuda", devices=devices, strategy=strategy)
    fabric.launch()
    model = torch.nn.Linear(32, 32)
    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    optimizer = fabric.setup_optimizers(optimizer)


if __name__ == "__main__":
    CLI(main)
