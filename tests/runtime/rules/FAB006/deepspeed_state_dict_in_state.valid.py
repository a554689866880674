"""FAB006 VALID: the set-up model (the engine) in the state, saved and loaded back under DeepSpeed.
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
state = {"model": model, "optimizer": optimizer, "step": 3}
fabric.save("ckpt", state)
state["step"] = 0
remainder = fabric.load("ckpt", state)
assert state["step"] == 3, state
print("RUNTIME-OK rank=0")
