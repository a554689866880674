#!/bin/bash
#SBATCH --job-name="cifar10-multi-gpu"
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=2
#SBATCH --gpus-per-node=2
#SBATCH --time=00:02:00

srun python -u cifar10-fabric-tb.py \
     --accelerator gpu \
     --devices 2 \
     --num_nodes 1
