import argparse

import lightning as L
import torch
from lightning.fabric.strategies import FSDPStrategy


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--accelerator", type=str, default="cpu")
    parser.add_argument("--devices", type=int, default=2)
    return parser.parse_args()


def main():
    args = get_args()
    strategy = FSDPStrategy(auto_wrap_policy={torch.nn.TransformerEncoderLayer}, state_dict_type="full")
    fabric = L.Fabric(accelerator=args.accelerator, devices=args.devices, strategy=strategy, precision="bf16-true")
    fabric.launch()
    model = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4)
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters(), lr=1e-3))


if __name__ == "__main__":
    main()
