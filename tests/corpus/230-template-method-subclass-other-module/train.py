import torch

from trainers.deepspeed import DeepSpeedTrainer

if __name__ == "__main__":
    DeepSpeedTrainer().fit(torch.nn.Linear(32, 32))
