#!/bin/bash
#SBATCH --job-name=pl_ddp_test
#SBATCH --nodes=2                     # Adjust number of nodes as needed
#SBATCH --ntasks-per-node=1           # One GPU (process) per node
#SBATCH --cpus-per-task=3
#SBATCH --gres=gpu:1                  # Request one GPU per node
#SBATCH --time=00:10:00

export PYTHONUNBUFFERED=1
echo "Running on nodes: $SLURM_NODELIST"

# Launch the script using srun so that each process starts the Lightning module.
srun script.py
