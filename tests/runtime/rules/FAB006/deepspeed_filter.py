"""FAB006 INVALID: ``save(..., filter=...)`` under DeepSpeed (the CPU test subclass, one process).
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
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = fabric.setup(model, optimizer)
fabric.save("ckpt", {"model": model}, filter={"model": lambda name, value: "bias" in name})
print("RUNTIME-OK rank=0")
