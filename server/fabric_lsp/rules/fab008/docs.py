"""FAB008's documentation and its VALID/INVALID examples (the test-suite runs them)."""

from __future__ import annotations

from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.rule import Example

SUMMARY = "Fabric configuration Lightning rejects before anything runs"

DOC = """
## What it does
Flags a `Fabric(...)` whose arguments Lightning rejects before any training code runs: an unknown
strategy, accelerator or precision name (with the closest valid names), a precision the strategy
or accelerator does not support (`"64-true"` under DeepSpeed or FSDP, `*-mixed` under XLA,
`"16-mixed"` under `ModelParallelStrategy`), `strategy="fsdp"` or DeepSpeed with
`accelerator="cpu"`, DeepSpeed with `devices=[1, 3]` (device indices other than `0..n-1`),
`devices=0`, `num_nodes=0`, a device list with `accelerator="cpu"`, duplicate GPU ids,
`ModelParallelStrategy` sizes that do not multiply to the world size, a DeepSpeed config file
(`DeepSpeedStrategy(config="ds.json")`) found neither next to the file nor in a folder above it up
to the workspace root (a warning: the job may run from elsewhere; absolute paths name another
machine's files and are not judged), `precision=` together with a
precision plugin, a setting given both on a strategy instance and on `Fabric`, two plugins of one
kind, a plugin that is not one — every check of the accelerator connector
(`lightning/fabric/connector.py`) and of the strategy's `setup_environment`, as Lightning 2.6.6
makes them. The finding sits on the value of the argument the check is about.

It is an **error** when every configuration the code can choose fails, a **warning** when one it
visibly can choose fails (a branch, a CLI choice or default). It also warns where Lightning itself
warns and then runs something else than the code asks for: the legacy `precision=16`/`"16"`/`"bf16"`
spellings, `precision="16-mixed"` with `accelerator="cpu"` (Lightning uses `"bf16-mixed"`), and
`strategy="dp"` with `accelerator="cpu"` (Lightning uses DDP, which then needs `launch()`).

The machine is not in the code: `accelerator="auto"` (or no accelerator) means a CPU machine and a
CUDA machine. A configuration that fails only on one of them — DeepSpeed or FSDP with no accelerator
named fails on a CPU machine — is taken to be meant for the other, and is not flagged.
`accelerator="cpu"` with DeepSpeed or FSDP is.

The checks are Lightning 2.6.6's. With an older release installed in the analysed environment
(or named by the `lightning-version` setting), the differences `fabric_lsp/facts.py` records apply:
before 2.1, DeepSpeed accepts only `"32-true"`, `"16-mixed"` and `"bf16-mixed"` (2.1 added
`"16-true"` and `"bf16-true"`).

## Why is this bad?
`Fabric(...)` runs in every process at job start, so the error comes after the job was queued, the
nodes allocated and the container pulled. DeepSpeed's device and CUDA checks run even later, when
`fabric.launch()` starts the processes.

## Lightning's message
The exact text of the check that fails, from the Lightning 2.6.6 source, for example:

    ValueError: You selected an invalid strategy name: `strategy='ddp_sharded'`. It must be either a
    string or an instance of `lightning.fabric.strategies.Strategy`. Example choices: auto, ddp,
    ddp_spawn, deepspeed, dp, ... Find a complete list of options in our documentation at
    https://lightning.ai                                          (lightning/fabric/connector.py:192)

    ValueError: `precision='64-true')` is not supported in DeepSpeed. `precision` must be one of:
    ('32-true', '16-true', 'bf16-true', '16-mixed', 'bf16-mixed').
                                                  (lightning/fabric/plugins/precision/deepspeed.py:49)

    RuntimeError: The DeepSpeed strategy is only supported on CUDA GPUs but `CPUAccelerator` is used.
                                                         (lightning/fabric/strategies/deepspeed.py:641)

    RuntimeError: The selected device indices [1, 3] don't match the local rank values of processes.
    If you need to select GPUs at a specific index, set the `CUDA_VISIBLE_DEVICES` environment
    variable instead. For example: `CUDA_VISIBLE_DEVICES=1,3`.   (lightning/fabric/strategies/deepspeed.py:881)

    RuntimeError: The sizes `data_parallel_size=2` and `tensor_parallel_size=2` multiplied should
    equal the world size (2).                              (lightning/fabric/strategies/model_parallel.py:514)

    ValueError: `Fabric(devices=0)` value is not a valid input using cpu accelerator.
                                                                   (lightning/fabric/connector.py:311)

The finding quotes the message of the check that fails; `fabric_lsp/facts.py` (`CONFIG_CHECKS`)
lists every check with its place in the source.

## Example
```python
fabric = Fabric(accelerator="cuda", devices=[1, 3], strategy="deepspeed", precision="64-true")
```

## Use instead
```python
# CUDA_VISIBLE_DEVICES=1,3 python train.py
fabric = Fabric(accelerator="cuda", devices=2, strategy="deepspeed", precision="bf16-mixed")
```

## Fix safety
Two fixes, both **safe** because they write what Lightning itself uses: the legacy `precision=16`
(and `"16"`, `"bf16"`) becomes `"16-mixed"` (`"bf16-mixed"`), and `precision="16-mixed"` with
`accelerator="cpu"` becomes `"bf16-mixed"`. They are offered only when the precision is a literal
in the `Fabric(...)` call and every configuration the code can choose turns it into the same
precision. An unknown name gets a suggestion in the message ("did you mean"), never a fix: the
closest spelling is not necessarily what the code means (`"ddp_sharded"` was removed, it is no typo).
A precision that names 8 bits (`"8-mixed"`, `"fp8"`) gets `"transformer-engine"`, Lightning's FP8
precision, rather than the closest spelling (`"16-mixed"`).
Nothing else is rewritten: which of two conflicting arguments the code means is the author's choice.

## Which strategies
All of them: the checks depend on the strategy (DeepSpeed: CUDA only, device indices `0..n-1`,
precisions; FSDP: GPU only, precisions; XLA: precisions, TPU device counts; ModelParallel:
precisions, sizes), the accelerator, the devices and the plugins. Not flagged: configurations
that fail only on hardware the code does not name (`accelerator="cuda"` is judged on a CUDA
machine with 8 devices, so `devices=[0, 9]` there is an error, `devices=4` is not), arguments whose
value is not known statically, `fabric run` options and `LT_*` variables, and Lightning's
deprecation notes other than the legacy precision spellings.
"""

VALID = [
    Example(
        "a configuration Lightning accepts",
        """
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cuda", devices=4, strategy="deepspeed_stage_2", precision="bf16-mixed")
""",
    ),
    Example(
        "DeepSpeed with no accelerator named: meant for GPUs",
        """
import lightning as L
fabric = L.Fabric(strategy="deepspeed", devices=8)
""",
    ),
    Example(
        "FSDP on the default accelerator",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="fsdp", precision="bf16-true")
""",
    ),
    Example(
        "a strategy name from the command line",
        """
import argparse
from lightning.fabric import Fabric
parser = argparse.ArgumentParser()
parser.add_argument("--strategy")
args = parser.parse_args()
fabric = Fabric(strategy=args.strategy)
""",
    ),
    Example(
        "a project's own class named Fabric",
        """
class Fabric:
    def __init__(self, **kwargs): ...
fabric = Fabric(strategy="ddp_sharded")
""",
    ),
]

INVALID = [
    Example(
        "a strategy name Lightning does not know",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed_stage3", devices=4)
""",
        severity=Severity.ERROR,
    ),
    Example(
        "a precision DeepSpeed rejects",
        """
import lightning as L
fabric = L.Fabric(strategy="deepspeed", precision="64-true")
""",
        severity=Severity.ERROR,
    ),
    Example(
        "DeepSpeed on an explicit CPU accelerator",
        """
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cpu", strategy="deepspeed", devices=2)
""",
        severity=Severity.ERROR,
    ),
    Example(
        "DeepSpeed with device indices other than 0..n-1",
        """
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cuda", devices=[1, 3], strategy="deepspeed")
""",
        severity=Severity.ERROR,
    ),
    Example(
        "no devices",
        """
from lightning.fabric import Fabric
fabric = Fabric(devices=0)
""",
        severity=Severity.ERROR,
    ),
    Example(
        "ModelParallel sizes that do not multiply to the world size",
        """
from lightning.fabric import Fabric
from lightning.fabric.strategies import ModelParallelStrategy
strategy = ModelParallelStrategy(parallelize, data_parallel_size=2, tensor_parallel_size=4)
fabric = Fabric(accelerator="cuda", devices=4, strategy=strategy)
""",
        severity=Severity.ERROR,
    ),
    Example(
        "an invalid precision in one branch",
        """
from lightning.fabric import Fabric
fabric = Fabric(precision="bf16-mixed" if use_bf16 else "fp16")
""",
        severity=Severity.WARNING,
    ),
    Example(
        "the legacy precision=16",
        """
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cuda", devices=2, precision=16)
""",
        severity=Severity.WARNING,
        fixed="""
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cuda", devices=2, precision="16-mixed")
""",
    ),
    Example(
        "fp16 mixed precision on CPU",
        """
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cpu", precision='16-mixed')
""",
        severity=Severity.WARNING,
        fixed="""
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cpu", precision='bf16-mixed')
""",
    ),
]
