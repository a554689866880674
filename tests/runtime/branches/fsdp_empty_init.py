"""The issue's case: the command line chooses FSDP or DeepSpeed ZeRO-3, the model is built under
``fabric.init_module(empty_init=True)`` (meta device under FSDP), then ``setup_module``, the optimizer
from the set-up model, ``setup_optimizers`` (fabric-lsp runtime fixture).

The separated setup is what FSDP needs here; the joint rewrite (``fsdp_empty_init.joint.py``) builds
the optimizer over meta-device parameters, which Lightning refuses under FSDP. So FAB001 must warn
(the DeepSpeed branch raises) but must not rewrite the file as a safe fix.

    python fsdp_empty_init.py --strategy fsdp | deepspeed_stage_3
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
