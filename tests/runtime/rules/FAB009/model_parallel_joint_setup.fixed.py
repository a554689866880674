"""FAB009 FIXED: the model set up first, then the optimizer built from the set-up model's
parameters and passed to ``setup_optimizers`` — the loss falls.
"""
import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import ModelParallelStrategy
from torch.distributed.fsdp import fully_shard


def parallelize(model, device_mesh):
    fully_shard(model, mesh=device_mesh["data_parallel"])
    return model


fabric = Fabric(accelerator="cpu", devices=1, strategy=ModelParallelStrategy(parallelize_fn=parallelize))
fabric.launch()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
model = fabric.setup_module(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
optimizer = fabric.setup_optimizers(optimizer)
x = torch.randn(4, 8, device=fabric.device)
losses = []
for _ in range(2):
    loss = model(x).pow(2).mean()
    fabric.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
    losses.append(loss.item())
print(f"losses={losses}")
assert losses[1] < losses[0], f"the optimizer step did not change the model: {losses}"
print("RUNTIME-OK rank=0")
