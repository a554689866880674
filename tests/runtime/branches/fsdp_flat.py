"""The command line chooses ``FSDPStrategy(use_orig_params=False)`` or DeepSpeed ZeRO-3; separated
setup (``setup_module``, optimizer from the set-up model, ``setup_optimizers``), which is what FSDP with
flat parameters requires: its joint setup raises ValueError (``fsdp_flat.joint.py``). So FAB001 must
warn (the DeepSpeed branch raises) but must not rewrite the file as a safe fix (fabric-lsp runtime
fixture).

    python fsdp_flat.py --strategy fsdp_flat | deepspeed_stage_3
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
parser.add_argument("--strategy", choices=["fsdp_flat", "deepspeed_stage_3"], default="fsdp_flat")
args = parser.parse_args()

cpu = [torch.device("cpu", 0)]
if args.strategy == "fsdp_flat":
    strategy = CPUFSDPStrategy(parallel_devices=cpu, use_orig_params=False)
else:
    strategy = CPUDeepSpeedStrategy(stage=3, parallel_devices=cpu)
fabric = Fabric(accelerator="cpu", devices=1, strategy=strategy)
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
