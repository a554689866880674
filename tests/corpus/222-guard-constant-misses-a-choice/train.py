import argparse

import lightning as L
import torch

JOINT_ONLY = ("deepspeed",)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--strategy", choices=["ddp", "deepspeed", "deepspeed_stage_3"], default="ddp")
    args = parser.parse_args()
    if args.strategy in JOINT_ONLY:
        raise SystemExit("deepspeed needs joint setup")
    fabric = L.Fabric(accelerator="cuda", devices=4, strategy=args.strategy)
    fabric.launch()
    model = torch.nn.Linear(32, 32)
    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    optimizer = fabric.setup_optimizers(optimizer)


if __name__ == "__main__":
    main()
