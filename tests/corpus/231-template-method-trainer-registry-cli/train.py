import argparse

import torch

from trainers.base import BaseTrainer
from trainers.zero import ZeroTrainer

TRAINERS = {"ddp": BaseTrainer, "zero3": ZeroTrainer}

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--trainer", choices=sorted(TRAINERS), default="ddp")
    args = parser.parse_args()
    TRAINERS[args.trainer]().fit(torch.nn.Linear(32, 32))
