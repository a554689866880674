#!/bin/bash -l
#SBATCH --mem=150G
#SBATCH --ntasks=24
#SBATCH --time=360
conda activate py-lightning
python 03_pytorch_train.py > slurm_python_log.txt
