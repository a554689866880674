import torch
from lightning.fabric import Fabric

FAST = torch.cuda.device_count() >= 8


def main():
    devices = 8 if FAST else 4
    fabric = Fabric(accelerator="cuda", devices=devices, num_nodes=4, strategy="ddp")
    fabric.launch()


if __name__ == "__main__":
    main()
