#!/bin/bash
python -m torch.distributed.run --nnodes=2 --nproc_per_node=4 --rdzv_backend=c10d --rdzv_endpoint=$HEAD:29500 train.py
