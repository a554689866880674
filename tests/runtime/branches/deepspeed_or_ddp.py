"""Separated setup (setup_module + setup_optimizers) where the command line chooses the strategy:
DeepSpeed ZeRO-3 (the CPU test subclass, one process) or DDP (gloo, two CPU processes)
(fabric-lsp runtime fixture: FAB001 warns, the joint fix must train on both branches).

    python deepspeed_or_ddp.py --strategy deepspeed_stage_3 | ddp
"""

import argparse

import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DDPStrategy, DeepSpeedStrategy


class CPUDeepSpeedStrategy(DeepSpeedStrategy):
    """Test-only: DeepSpeed on CPU (gloo, world size 1); skips only the CUDA guard."""

    def setup_environment(self) -> None:
        DDPStrategy.setup_environment(self)


parser = argparse.ArgumentParser()
parser.add_argument("--strategy", choices=["deepspeed_stage_3", "ddp"], default="deepspeed_stage_3")
args = parser.parse_args()

if args.strategy == "deepspeed_stage_3":
    strategy = CPUDeepSpeedStrategy(stage=3, parallel_devices=[torch.device("cpu", 0)])
    devices = 1
else:
    strategy = "ddp"
    devices = 2
fabric = Fabric(accelerator="cpu", devices=devices, strategy=strategy)
fabric.launch()

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
model = fabric.setup_module(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
optimizer = fabric.setup_optimizers(optimizer)

x = torch.randn(4, 8, device=fabric.device)
losses = []
for _ in range(2):  # two steps on one batch: the first step must lower the loss
    loss = model(x).pow(2).mean()
    fabric.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
    losses.append(loss.item())
print(f"losses={losses}")
assert losses[1] < losses[0], f"the optimizer step did not change the model: {losses}"
print(f"RUNTIME-OK rank={fabric.global_rank}")
