#!/bin/bash -l

# SLURM SUBMIT SCRIPT
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=4
#SBATCH --gpus-per-task=1

# debugging flags (optional)
# export NCCL_DEBUG=INFO

srun python main.py fit
