import os

import lightning as L
import torch
from lightning.fabric.utilities.rank_zero import rank_zero_only

OUT_DIR = "out/finetune"


@rank_zero_only
def save_checkpoint(fabric, model, optimizer, step):
    os.makedirs(OUT_DIR, exist_ok=True)
    path = os.path.join(OUT_DIR, f"step-{step:06d}.ckpt")
    fabric.print(f"Saving checkpoint to {path}")
    fabric.save(path, {"model": model, "optimizer": optimizer, "step": step})


def fit(fabric, model, optimizer, batches, save_interval=100):
    for step, (x, y) in enumerate(batches):
        loss = torch.nn.functional.mse_loss(model(x), y)
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if step % save_interval == 0:
            save_checkpoint(fabric, model, optimizer, step)


def setup(devices: int = 2, precision: str = "32-true"):
    fabric = L.Fabric(accelerator="cpu", devices=devices, precision=precision)
    fabric.launch()
    model = torch.nn.Linear(16, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    model, optimizer = fabric.setup(model, optimizer)
    batches = [(torch.randn(8, 16), torch.randn(8, 1)) for _ in range(1000)]
    fit(fabric, model, optimizer, batches)


if __name__ == "__main__":
    from jsonargparse import CLI

    CLI(setup)
