import lightning as L
import torch
from lightning.fabric.strategies import DeepSpeedStrategy


def main(fabric: L.Fabric) -> None:
    model = torch.nn.Linear(32, 32)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model, optimizer = fabric.setup(model, optimizer)
    loss = model(torch.randn(4, 32, device=fabric.device)).sum()
    fabric.backward(loss)
    optimizer.step()


if __name__ == "__main__":
    strategy = DeepSpeedStrategy(config="configs/ds_zero3.json")
    fabric = L.Fabric(accelerator="cuda", devices=4, strategy=strategy, precision="bf16-mixed")
    fabric.launch(main)
