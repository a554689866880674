import argparse

import torch
from lightning.fabric import Fabric


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--devices", type=int, default=1)
    parser.add_argument("--num_nodes", type=int, default=1)
    args = parser.parse_args()
    fabric = Fabric(accelerator="gpu", devices=args.devices, num_nodes=args.num_nodes, strategy="ddp")
    fabric.launch()


if __name__ == "__main__":
    main()
