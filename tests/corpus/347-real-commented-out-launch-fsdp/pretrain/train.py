import argparse
from pathlib import Path

import lightning as L
import torch
from lightning.fabric.strategies import FSDPStrategy


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--out-dir", type=Path, default=Path("out"))
    return parser.parse_args()


def setup(args):
    if args.devices > 1:
        strategy = FSDPStrategy(state_dict_type="full", limit_all_gathers=True, cpu_offload=False)
    else:
        strategy = "auto"
    fabric = L.Fabric(devices=args.devices, strategy=strategy, precision="bf16-mixed")
    fabric.print(vars(args))
    # fabric.launch(main, args)
    main(fabric, args)


def main(fabric, args):
    if fabric.global_rank == 0:
        args.out_dir.mkdir(parents=True, exist_ok=True)
    fabric.seed_everything(3407)
    with fabric.init_module(empty_init=False):
        model = torch.nn.Linear(512, 512)
    model = fabric.setup(model)
    optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters(), lr=2e-4))
    state = {"model": model, "optimizer": optimizer, "iter_num": 0}
    fabric.save(args.out_dir / "last.ckpt", state)


if __name__ == "__main__":
    setup(parse_args())
