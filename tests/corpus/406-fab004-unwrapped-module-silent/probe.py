import torch
from lightning.fabric import Fabric

fabric = Fabric(accelerator="cuda", devices=1, precision="bf16-mixed")
backbone = torch.nn.Linear(16, 16)
backbone = fabric.setup_module(backbone)
backbone.requires_grad_(False)

probe = torch.nn.Linear(16, 2).to(fabric.device)
probe_opt = torch.optim.SGD(probe.parameters(), lr=0.1)
for x, y in []:
    feats = backbone.module(x)
    loss = torch.nn.functional.cross_entropy(probe(feats), y)
    loss.backward()
    probe_opt.step()
    probe_opt.zero_grad()
