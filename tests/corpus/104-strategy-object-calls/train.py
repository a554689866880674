import torch

from engine import Engine

engine = Engine()
model = engine.setup_module(torch.nn.Linear(4, 4))
optimizers = engine.setup_optimizers(torch.optim.Adam(model.parameters()))
