import torch

from utils import LightningFabric


def main(strategy: str = "ddp", devices: int = 4):
    fabric = LightningFabric(devices=devices, strategy=strategy, precision="bf16-true")
    fabric.launch()
    model = fabric.setup(torch.nn.Linear(4, 4))
    optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters()))
    fabric.barrier()
    return model, optimizer


if __name__ == "__main__":
    main()
