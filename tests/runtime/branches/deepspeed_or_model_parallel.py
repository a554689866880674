"""Separated setup where the command line chooses DeepSpeed ZeRO-3 (the CPU test subclass) or
``ModelParallelStrategy`` (FSDP2 ``fully_shard``, gloo, one CPU process) (fabric-lsp runtime fixture).

ModelParallel needs the separate setup: with the joint rewrite (``deepspeed_or_model_parallel.joint.py``)
the optimizer keeps the parameters ``parallelize`` replaced, Lightning raises nothing, and training
silently changes no weight (the script's own check on the loss catches it). So FAB001 must warn (the
DeepSpeed branch raises) but must not rewrite the file as a safe fix.

    python deepspeed_or_model_parallel.py --strategy deepspeed_stage_3 | model_parallel
"""

import argparse

import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DDPStrategy, DeepSpeedStrategy, ModelParallelStrategy
from torch.distributed._composable.fsdp import fully_shard


class CPUDeepSpeedStrategy(DeepSpeedStrategy):
    """Test-only: DeepSpeed on CPU (gloo, world size 1); skips only the CUDA guard."""

    def setup_environment(self) -> None:
        DDPStrategy.setup_environment(self)


def parallelize(model: torch.nn.Module, device_mesh) -> torch.nn.Module:
    fully_shard(model, mesh=device_mesh["data_parallel"])  # FSDP2: replaces the parameters by DTensors
    return model


parser = argparse.ArgumentParser()
parser.add_argument("--strategy", choices=["deepspeed_stage_3", "model_parallel"], default="deepspeed_stage_3")
args = parser.parse_args()

if args.strategy == "deepspeed_stage_3":
    strategy = CPUDeepSpeedStrategy(stage=3, parallel_devices=[torch.device("cpu", 0)])
else:
    strategy = ModelParallelStrategy(parallelize)
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
