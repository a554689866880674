"""FAB006 INVALID: ``fabric.save(state, path)`` with its arguments swapped (one CPU device):
the dict is taken as the path and the string as the state.
"""
import torch
from lightning.fabric import Fabric

fabric = Fabric(accelerator="cpu", devices=1)
torch.manual_seed(0)
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = fabric.setup(model, optimizer)
fabric.save(model.state_dict(), "model.pth")
loaded = fabric.load("model.pth")
assert set(loaded) == {"weight", "bias"}, loaded.keys()
print("RUNTIME-OK rank=0")
