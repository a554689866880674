import lightning as L
import torch
from lightning.fabric.strategies import DeepSpeedStrategy


def main(fabric: L.Fabric, width: int, steps: int) -> None:
    model = torch.nn.Linear(width, width)
    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    optimizer = fabric.setup_optimizers(optimizer)


if __name__ == "__main__":
    fabric = L.Fabric(accelerator="cuda", devices=2, strategy=DeepSpeedStrategy(stage=2))
    fabric.launch(main, 64, 100)
