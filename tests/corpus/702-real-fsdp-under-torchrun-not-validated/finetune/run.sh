#!/bin/bash
torchrun --nproc_per_node=2 finetune/full.py --data_dir data/alpaca
