"""FAB003 FIXED: ``self.model.mark_forward_method("encode")`` after ``self.fabric.setup`` under DeepSpeed
ZeRO-2 (the CPU test subclass, one process): ``encode`` runs through the engine's forward.
"""
import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DDPStrategy, DeepSpeedStrategy


class CPUDeepSpeedStrategy(DeepSpeedStrategy):
    """Test-only: DeepSpeed on CPU (gloo, world size 1); skips only the CUDA guard."""

    def setup_environment(self) -> None:
        DDPStrategy.setup_environment(self)


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Linear(8, 16)
        self.proj = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.proj(self.embed(x)).pow(2).mean()

    def encode(self, x):
        return self.proj(self.embed(x))


class Embedder:
    def __init__(self):
        strategy = CPUDeepSpeedStrategy(stage=2, parallel_devices=[torch.device("cpu", 0)])
        self.fabric = Fabric(accelerator="cpu", devices=1, strategy=strategy)
        self.fabric.launch()

    def setup(self):
        torch.manual_seed(0)
        model = Encoder()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.model, self.optimizer = self.fabric.setup(model, optimizer)
        self.model.mark_forward_method("encode")

    def train(self, x):
        losses = []
        for _ in range(2):  # two steps on one batch: the first step must lower the loss
            loss = self.model(x)
            self.fabric.backward(loss)
            self.optimizer.step()
            self.optimizer.zero_grad()
            losses.append(loss.item())
        assert losses[1] < losses[0], f"the optimizer step did not change the model: {losses}"

    def embed(self, x):
        with torch.no_grad():
            return self.model.encode(x)


embedder = Embedder()
embedder.setup()
batch = torch.randn(4, 8, device=embedder.fabric.device)
embedder.train(batch)
assert embedder.embed(batch).shape == (4, 4)
print(f"RUNTIME-OK rank={embedder.fabric.global_rank}")
