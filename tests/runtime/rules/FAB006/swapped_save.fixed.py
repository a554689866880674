"""FAB006 FIXED: ``fabric.save(path, state)``, as FAB006's fix writes it.
"""
import torch
from lightning.fabric import Fabric

fabric = Fabric(accelerator="cpu", devices=1)
torch.manual_seed(0)
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = fabric.setup(model, optimizer)
fabric.save("model.pth", model.state_dict())
loaded = fabric.load("model.pth")
assert set(loaded) == {"weight", "bias"}, loaded.keys()
print("RUNTIME-OK rank=0")
