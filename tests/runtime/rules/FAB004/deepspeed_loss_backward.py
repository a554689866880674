"""FAB004 INVALID: ``loss.backward()`` under DeepSpeed ZeRO-3 (the CPU test subclass, one process).
The DeepSpeed strategy overrides ``backward`` (the engine must run it), so the hook Fabric puts on
the set-up module's output raises at the first backward.
"""
import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DDPStrategy, DeepSpeedStrategy


class CPUDeepSpeedStrategy(DeepSpeedStrategy):
    """Test-only: DeepSpeed on CPU (gloo, world size 1); skips only the CUDA guard."""

    def setup_environment(self) -> None:
        DDPStrategy.setup_environment(self)


fabric = Fabric(
    accelerator="cpu",
    devices=1,
    strategy=CPUDeepSpeedStrategy(stage=3, parallel_devices=[torch.device("cpu", 0)]),
)
fabric.launch()

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = fabric.setup(model, optimizer)

x = torch.randn(4, 8, device=fabric.device)
losses = []
for _ in range(2):  # two steps on one batch: the first step must lower the loss
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    losses.append(loss.item())
print(f"losses={losses}")
assert losses[1] < losses[0], f"the optimizer step did not change the model: {losses}"
print("RUNTIME-OK rank=0")
