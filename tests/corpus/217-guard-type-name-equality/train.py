import argparse

import lightning as L
import torch


def main(fabric, args):
    model = torch.nn.Linear(32, 32)
    if type(fabric.strategy).__name__ == "DeepSpeedStrategy":
        model, optimizer = fabric.setup(model, torch.optim.AdamW(model.parameters()))
    else:
        model = fabric.setup_module(model)
        optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters()))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--strategy", choices=["ddp", "fsdp", "deepspeed_stage_2"], default="ddp")
    args = parser.parse_args()
    fabric = L.Fabric(accelerator="cuda", devices=4, strategy=args.strategy)
    fabric.launch(main, args)
