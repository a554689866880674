import torch
from lightning.fabric import Fabric


def train_loop(fabric: Fabric, model: torch.nn.Module, optimizer: torch.optim.Optimizer, batches):
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(optimizer)
    for batch in batches:
        fabric.backward(model(batch).sum())
        optimizer.step()
        optimizer.zero_grad()
