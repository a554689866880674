#!/bin/bash
#SBATCH --job-name=mnist-training
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=4
#SBATCH --gres=gpu:4
#SBATCH --time=00:30:00

conda activate venv
srun python /gws/nopw/users/someone/project/scripts/mnist/main.py
