"""The JOINT rewrite of ``fsdp_empty_init_wrapped.py`` (the safe fix FAB001 once wrote): it trains
under DeepSpeed ZeRO-3, and under FSDP Lightning refuses it: "The optimizer has references to the
model's meta-device parameters. ..." (fabric.py:1211; fabric-lsp runtime fixture).

    python fsdp_empty_init_wrapped.joint.py --strategy fsdp | deepspeed_stage_3
"""

import argparse

import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DDPStrategy, DeepSpeedStrategy, FSDPStrategy


class CPUDeepSpeedStrategy(DeepSpeedStrategy):
    """Test-only: DeepSpeed on CPU (gloo, world size 1); skips only the CUDA guard."""

    def setup_environment(self) -> None:
        DDPStrategy.setup_environment(self)


class CPUFSDPStrategy(FSDPStrategy):
    """Test-only: Fabric's "FSDP is only available on GPU" check is ``type(strategy) is FSDPStrategy``."""


parser = argparse.ArgumentParser()
parser.add_argument("--strategy", choices=["fsdp", "deepspeed_stage_3"], default="fsdp")
args = parser.parse_args()

cpu = [torch.device("cpu", 0)]
if args.strategy == "fsdp":
    strategy = CPUFSDPStrategy(parallel_devices=cpu)
else:
    strategy = CPUDeepSpeedStrategy(stage=3, parallel_devices=cpu)
fabric = Fabric(accelerator="cpu", devices=1, strategy=strategy)
fabric.launch()

torch.manual_seed(0)
with fabric.init_module(empty_init=True):
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
wrapped, optimizer = fabric.setup(model, optimizer)

x = torch.randn(4, 8, device=fabric.device)
losses = []
for _ in range(2):  # two steps on one batch: the first step must lower the loss
    loss = wrapped(x).pow(2).mean()
    fabric.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
    losses.append(loss.item())
print(f"losses={losses}")
assert losses[1] < losses[0], f"the optimizer step did not change the model: {losses}"
print(f"RUNTIME-OK rank={fabric.global_rank}")
