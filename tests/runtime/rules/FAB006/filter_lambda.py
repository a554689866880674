"""FAB006 INVALID: ``save(..., filter=<a lambda>)`` (one CPU device): ``filter`` must be a dict
of state keys to callables.
"""
import torch
from lightning.fabric import Fabric

fabric = Fabric(accelerator="cpu", devices=1)
torch.manual_seed(0)
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = fabric.setup(model, optimizer)
fabric.save("adapter.pth", {"model": model}, filter=lambda name, value: "bias" in name)
print("RUNTIME-OK rank=0")
