#!/bin/bash
set -e
CUDA_VISIBLE_DEVICES=0,1,2,3 python train.py --lr 1e-3
