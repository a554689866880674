#!/bin/bash -l

# SLURM SUBMIT SCRIPT
#SBATCH --nodes=2        # This needs to match Fabric(num_nodes=...)
#SBATCH --ntasks-per-node=8     # This needs to match Fabric(devices=...)
#SBATCH --gres=gpu:8            # Request N GPUs per machine
#SBATCH --mem=0
#SBATCH --time=0-02:00:00

#SBATCH --output=/private/home/user/myWorkspace/TinyLlama/results/slurm-%j.out
#SBATCH --error=/private/home/user/myWorkspace/TinyLlama/results/slurm-%j.err

# Activate conda environment
module load cuda/11.8

conda activate tinyllama

# Debugging flags (optional)
export NCCL_DEBUG=INFO
export PYTHONFAULTHANDLER=1

# Run your training script
srun python /private/home/user/myWorkspace/TinyLlama/pretrain/tinyllama.py --nodes 2 --devices 8 --train_data_dir /checkpoint/user/tinyllama_datasets/data/slim_star_combined  --val_data_dir /checkpoint/user/tinyllama_datasets/data/slim_star_combined
