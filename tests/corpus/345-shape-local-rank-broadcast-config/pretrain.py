import argparse
import json

import lightning as L
import torch

STRATEGY = "fsdp"


def load_run_config(fabric, path="run.json"):
    config = None
    if fabric.local_rank == 0:
        with open(path) as fh:
            config = json.load(fh)
        config = fabric.broadcast(config, src=0)
    return config


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpus", type=int, default=8)
    args = parser.parse_args()
    fabric = L.Fabric(accelerator="cuda", devices=args.gpus, strategy=STRATEGY)
    fabric.launch()
    config = load_run_config(fabric)
    with fabric.init_module():
        model = torch.nn.Transformer(d_model=config["d_model"])
    model = fabric.setup(model)


if __name__ == "__main__":
    main()
