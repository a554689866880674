import lightning as L
import torch

from config import LARGE_MODEL_FABRIC


def main():
    fabric = L.Fabric(**LARGE_MODEL_FABRIC)
    fabric.launch()
    model = torch.nn.Linear(32, 32)
    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    optimizer = fabric.setup_optimizers(optimizer)


if __name__ == "__main__":
    main()
