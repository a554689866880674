import argparse
import types

import lightning as L
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--ckpt", required=True)
parser.add_argument("--ctx", type=int, default=4096)
a = parser.parse_args()

args = types.SimpleNamespace(n_layer=32, n_embd=2560, ctx_len=a.ctx, precision="bf16", strategy="deepspeed_stage_2")


def main():
    fabric = L.Fabric(accelerator="cuda", devices=1, precision="bf16", strategy="deepspeed_stage_2")
    fabric.launch()
    sd = torch.load(a.ckpt, map_location="cpu", mmap=True)
    model = torch.nn.Linear(args.n_embd, args.n_embd)
    model.load_state_dict(sd, strict=False)
    optimizer = torch.optim.Adam(model.parameters())
    model, optimizer = fabric.setup(model, optimizer)


if __name__ == "__main__":
    main()
