import torch
import torch.nn as nn
from lightning.fabric import Fabric, seed_everything


def test_amp_fused_optimizer_parity():
    def run(fused=False):
        seed_everything(1234)
        fabric = Fabric(accelerator="cuda", precision=16, devices=1)

        model = nn.Linear(10, 10).to(fabric.device)
        optimizer = torch.optim.Adam(model.parameters(), lr=1.0, fused=fused)

        model, optimizer = fabric.setup(model, optimizer)
        for _ in range(5):
            output = model(torch.randn(2, 10, device=fabric.device))
            fabric.backward(output.sum())
            optimizer.step()
            optimizer.zero_grad()
        return model.parameters()

    for p, q in zip(run(fused=False), run(fused=True)):
        torch.testing.assert_close(p, q)
