"""Separated setup on attribute targets inside a class (``self.model = fabric.setup_module(self.model)``,
``self.optimizer = fabric.setup_optimizers(self.optimizer)``) under DeepSpeed ZeRO-3 on CPU
(fabric-lsp runtime fixture).
"""
import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DDPStrategy, DeepSpeedStrategy


class CPUDeepSpeedStrategy(DeepSpeedStrategy):
    """Test-only: DeepSpeed on CPU (gloo, world size 1); skips only the CUDA guard."""

    def setup_environment(self) -> None:
        DDPStrategy.setup_environment(self)


class Trainer:
    def __init__(self, fabric: Fabric) -> None:
        self.fabric = fabric
        torch.manual_seed(0)
        self.model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.05)

    def setup(self) -> None:
        fabric = self.fabric
        self.model = fabric.setup_module(self.model)
        self.optimizer = fabric.setup_optimizers(self.optimizer)

    def step(self, x: torch.Tensor) -> float:
        loss = self.model(x).pow(2).mean()
        self.fabric.backward(loss)
        self.optimizer.step()
        self.optimizer.zero_grad()
        return loss.item()


fabric = Fabric(
    accelerator="cpu",
    devices=1,
    strategy=CPUDeepSpeedStrategy(stage=3, parallel_devices=[torch.device("cpu", 0)]),
)
fabric.launch()
trainer = Trainer(fabric)
trainer.setup()
x = torch.randn(4, 8, device=fabric.device)
losses = [trainer.step(x) for _ in range(2)]  # two steps on one batch: the first must lower the loss
print(f"losses={losses}")
assert losses[1] < losses[0], f"the optimizer step did not change the model: {losses}"
print("RUNTIME-OK")
