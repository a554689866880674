import lightning as L
import torch
from lightning.fabric.strategies import DeepSpeedStrategy


def main(strategy: str = "deepspeed_stage_2"):
    fabric = L.Fabric(accelerator="cuda", devices=2, strategy=strategy)
    fabric.launch()
    model = torch.nn.Linear(8, 8)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = fabric.setup(model, optimizer)
    for batch in []:
        fabric.backward(model(batch).sum())
        if not isinstance(fabric.strategy, DeepSpeedStrategy):
            fabric.clip_gradients(model, optimizer, max_norm=1.0)
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    main()
