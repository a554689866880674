"""Separated setup with TWO optimizers in one setup_optimizers call, under DeepSpeed ZeRO-3 on CPU
(fabric-lsp runtime fixture). DeepSpeed's joint setup takes exactly one optimizer, so there is no
mechanical fix: fabric-lsp flags it and leaves the file alone.
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
opt_b = torch.optim.SGD(model[2].parameters(), lr=0.1)
model = fabric.setup_module(model)
opt_a, opt_b = fabric.setup_optimizers(opt_a, opt_b)

x = torch.randn(4, 8, device=fabric.device)
loss = model(x).pow(2).mean()
fabric.backward(loss)
opt_a.step()
opt_b.step()
print("RUNTIME-OK")
