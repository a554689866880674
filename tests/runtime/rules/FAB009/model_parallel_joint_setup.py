"""FAB009 INVALID: joint ``fabric.setup(model, optimizer)`` under ``ModelParallelStrategy`` (CPU,
gloo, one process). Lightning raises nothing: ``setup_module`` runs ``parallelize_fn``, whose
``fully_shard`` replaces the parameters the optimizer holds (strategy.py:159,
model_parallel.py:185), so the optimizer step changes no weight and the loss stays the same
(catalogue Q1).
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
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = fabric.setup(model, optimizer)
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
