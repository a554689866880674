"""FAB005 INVALID: a model set up without an optimizer (a frozen teacher) under DeepSpeed ZeRO-2 (the
CPU test subclass, one process): DeepSpeed itself refuses it ("zero stage 2 requires an optimizer").
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
    strategy=CPUDeepSpeedStrategy(stage=2, parallel_devices=[torch.device("cpu", 0)]),
)
fabric.launch()

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
teacher = torch.nn.Linear(8, 1).requires_grad_(False)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = fabric.setup(model, optimizer)
teacher = fabric.setup(teacher)

x = torch.randn(4, 8, device=fabric.device)
target = teacher(x)
losses = []
for _ in range(2):  # two steps on one batch: the first step must lower the loss
    loss = (model(x) - target).pow(2).mean()
    fabric.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
    losses.append(loss.item())
print(f"losses={losses}")
assert losses[1] < losses[0], f"the optimizer step did not change the model: {losses}"
print("RUNTIME-OK rank=0")
