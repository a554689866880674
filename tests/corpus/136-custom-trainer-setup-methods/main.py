import torch

from trainer import Trainer

trainer = Trainer()
trainer.setup_optimizers(("AdamW", 1e-4))
model, optimizer = trainer.setup(torch.nn.Linear(4, 4))
