#!/bin/bash
#SBATCH --qos=ng
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=4
#SBATCH --gpus-per-node=4
#SBATCH --cpus-per-task=32
#SBATCH --time=48:00:00
#SBATCH --output=slurm/test-ddp.%j.out

module load conda
conda activate ml-tt

# srun --label --cpu-bind=v --accel-bind=v python -u training.py
python training.py
