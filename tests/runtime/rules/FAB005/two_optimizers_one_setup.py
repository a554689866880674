"""FAB005 INVALID: two optimizers in one ``fabric.setup`` under DeepSpeed ZeRO-3 (the CPU test
subclass, one process). DeepSpeed's engine takes exactly one optimizer.
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
opt_a = torch.optim.SGD(model[0].parameters(), lr=0.1)
opt_b = torch.optim.SGD(model[2].parameters(), lr=0.05)
model, opt_a, opt_b = fabric.setup(model, opt_a, opt_b)

x = torch.randn(4, 8, device=fabric.device)
losses = []
for _ in range(2):  # two steps on one batch: the first step must lower the loss
    loss = model(x).pow(2).mean()
    fabric.backward(loss)
    opt_a.step()
    opt_b.step()
    opt_a.zero_grad()
    opt_b.zero_grad()
    losses.append(loss.item())
print(f"losses={losses}")
assert losses[1] < losses[0], f"the optimizer step did not change the model: {losses}"
print("RUNTIME-OK rank=0")
