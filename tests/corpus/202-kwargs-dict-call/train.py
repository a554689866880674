import lightning as L
import torch
from lightning.fabric.strategies import DeepSpeedStrategy

FABRIC_CONFIG = dict(accelerator="cuda", devices=2, strategy=DeepSpeedStrategy(stage=3), precision="bf16-true")


def main():
    fabric = L.Fabric(**FABRIC_CONFIG)
    fabric.launch()
    with fabric.init_module():
        model = torch.nn.Linear(32, 32)
    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    optimizer = fabric.setup_optimizers(optimizer)


if __name__ == "__main__":
    main()
