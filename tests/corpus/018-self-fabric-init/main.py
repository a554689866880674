import torch
from trainer import Trainer

Trainer(devices=4).fit(torch.nn.Linear(8, 8))
