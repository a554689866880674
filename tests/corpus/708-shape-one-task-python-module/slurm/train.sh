#!/bin/bash
#SBATCH --job-name=gpu_ddp
#SBATCH --partition=gpu
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=4
#SBATCH --gpus-per-node=4

source ~/.venv/bin/activate
python -m scripts.train
