"""FAB006 VALID: ``filter={"model": <callable>}`` (one CPU device).
"""
import torch
from lightning.fabric import Fabric

fabric = Fabric(accelerator="cpu", devices=1)
torch.manual_seed(0)
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = fabric.setup(model, optimizer)
fabric.save("adapter.pth", {"model": model}, filter={"model": lambda name, value: "bias" in name})
loaded = fabric.load("adapter.pth")
assert set(loaded["model"]) == {"bias"}, loaded["model"].keys()
print("RUNTIME-OK rank=0")
