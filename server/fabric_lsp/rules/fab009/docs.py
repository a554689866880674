"""FAB009's documentation and examples (the examples are also its tests)."""

from __future__ import annotations

from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.rule import Example

SUMMARY = "Joint `setup(model, optimizer)` where the strategy needs separate setup"

DOC = """
## What it does
Flags a joint `fabric.setup(model, optimizer, ...)` on a Lightning `Fabric` whose strategy needs
the model set up first and the optimizer built afterwards from the set-up model's parameters
(`setup_module`, then the optimizer, then `setup_optimizers`):

- `XLAFSDPStrategy` (`strategy="xla_fsdp"`, `XLAFSDPStrategy(...)`, or `strategy="fsdp"` with
  `accelerator="tpu"`, which Lightning turns into XLAFSDP): joint setup raises `NotImplementedError`;
- `FSDPStrategy(use_orig_params=False)`: joint setup raises `ValueError`;
- `FSDPStrategy` (also `strategy="fsdp"`) when an optimizer passed is built from the parameters of a
  model created under `fabric.init_module(empty_init=True)` or `torch.device("meta")`: joint setup
  raises `RuntimeError`;
- `ModelParallelStrategy`: joint setup returns, but the optimizer keeps the parameters from before
  `parallelize_fn` replaced them, so training silently changes no weights (always a **warning**).

It is an **error** when every strategy the code can choose raises, and a **warning** when one it
can choose (a conditional expression, an `if`/`else`, a CLI choice, a default argument) fails, or
when the model is on the meta device only on some paths or for a value not known statically
(`empty_init=flag`). This is FAB001's mirror image: FAB001 reports separate setup where the
strategy (DeepSpeed, XLA) needs joint setup.

Not reported by this rule: *separate* setup with the optimizer built before `setup_module`, which
fails later, in `setup_optimizers` (XLAFSDP: `ValueError` at `strategies/xla_fsdp.py:267`;
`FSDPStrategy(use_orig_params=False)`: `ValueError` at `strategies/fsdp.py:327`; an optimizer over
meta-device parameters under any strategy: `RuntimeError` at `fabric.py:1238`).

## Why is this bad?
Lightning 2.6.6 stops (or silently trains nothing) only after the job has been queued, launched and
has built the model. The messages it gives:

    NotImplementedError: The `XLAFSDPStrategy` does not support the joint setup of module and
    optimizer(s). Please do it in this order: Create the model, call `setup_module`, create the
    optimizer, call `setup_optimizer`.                       (lightning/fabric/strategies/xla_fsdp.py:203)

    ValueError: You set `FSDPStrategy(use_orig_params=False)` but this is not supported when setting
    the model and optimizer up jointly. ...                   (lightning/fabric/strategies/fsdp.py:271)

    RuntimeError: The optimizer has references to the model's meta-device parameters. Materializing
    them is is currently not supported unless you to set up the model and optimizer(s) separately. ...
                                                               (lightning/fabric/fabric.py:1211)

`ModelParallelStrategy` does not override `Strategy.setup_module_and_optimizers`
(`strategies/strategy.py:159`): `setup_module` runs your `parallelize_fn`
(`strategies/model_parallel.py:185`), whose `fully_shard` / `parallelize_module` replace the
module's parameters with new ones the optimizer does not hold; no error is raised.

## Example
```python
fabric = Fabric(strategy="xla_fsdp")
model = Net()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
model, optimizer = fabric.setup(model, optimizer)
```

## Use instead
```python
fabric = Fabric(strategy="xla_fsdp")
model = Net()
model = fabric.setup_module(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)
```

## Fix safety
The fix is **unsafe** (offered, never applied by fix-all): it moves the optimizer's construction
below `setup_module`, so the optimizer is built from the set-up model's parameters, which is what
these strategies need but changes when the constructor runs. It is offered only when the rewrite
is provably right otherwise: the call is `T_m, T_o = fabric.setup(M, O)` with one optimizer passed
by name (keyword arguments only `move_to_device` / `_reapply_compile`, which go to
`setup_module`), `O` is assigned in the same block before the call from `M.parameters()` /
`M.named_parameters()` alone (no parameter groups, submodules or other models), and the
statements between neither use `M` or `O`, nor reassign a name the construction reads, nor leave
the block. The construction is rewritten to read the set-up model (`T_m.parameters()`).

No fix is offered (the message says why) when another strategy the code can choose needs joint
setup (DeepSpeed, XLA: separate setup raises there, see FAB001) or cannot be determined, when a
scheduler or several optimizers are passed, or when the optimizer is built elsewhere (another
block, a helper, another function).

## Which strategies
Flagged: `xla_fsdp`, `XLAFSDPStrategy(...)`, `strategy="fsdp"` with `accelerator="tpu"`,
`FSDPStrategy(use_orig_params=False)`, `fsdp` / `FSDPStrategy(...)` with an optimizer over a
meta-device model, `ModelParallelStrategy(...)` (warning), and their subclasses. Silent: joint
setup under `fsdp` (its default `use_orig_params=True` keeps the optimizer's parameters),
`FSDPStrategy(use_orig_params=True)`, a model built under `init_module()` or
`init_module(empty_init=False)`, a meta-device model materialized (`model.to_empty(...)`,
`model.load_state_dict(..., assign=True)`) before the optimizer is built, `ddp*`, `dp`, `deepspeed*`, `xla`, single-device strategies, the
default strategy, `setup(model)` alone, and separate `setup_module` + `setup_optimizers`.
"""

VALID = [
    Example(
        "separate setup under XLAFSDP",
        """
import torch
from lightning.fabric import Fabric
fabric = Fabric(strategy="xla_fsdp")
model = fabric.setup_module(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)
""",
    ),
    Example(
        "joint setup under FSDP (use_orig_params defaults to True)",
        """
import torch
from lightning.fabric import Fabric
fabric = Fabric(strategy="fsdp")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
model, optimizer = fabric.setup(model, optimizer)
""",
    ),
    Example(
        "joint setup under FSDP with a model built by init_module(empty_init=False)",
        """
import torch
from lightning.fabric import Fabric
fabric = Fabric(strategy="fsdp")
with fabric.init_module(empty_init=False):
    model = torch.nn.Linear(4, 2)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
model, optimizer = fabric.setup(model, optimizer)
""",
    ),
    Example(
        "joint setup under DeepSpeed",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed_stage_3")
model, optimizer = fabric.setup(model, optimizer)
""",
    ),
    Example(
        "model-only setup under XLAFSDP",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="xla_fsdp")
model = fabric.setup(model)
""",
    ),
    Example(
        "FSDPStrategy(use_orig_params=True)",
        """
from lightning.fabric import Fabric
from lightning.fabric.strategies import FSDPStrategy
fabric = Fabric(strategy=FSDPStrategy(use_orig_params=True))
model, optimizer = fabric.setup(model, optimizer)
""",
    ),
]

INVALID = [
    Example(
        "XLAFSDP string",
        """
import torch
from lightning.fabric import Fabric
fabric = Fabric(strategy="xla_fsdp")
model = torch.nn.Linear(4, 2)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
model, optimizer = fabric.setup(model, optimizer)
""",
        severity=Severity.ERROR,
        fixed="""
import torch
from lightning.fabric import Fabric
fabric = Fabric(strategy="xla_fsdp")
model = torch.nn.Linear(4, 2)
model = fabric.setup_module(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)
""",
    ),
    Example(
        "FSDPStrategy(use_orig_params=False), set-up objects renamed",
        """
import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import FSDPStrategy
fabric = Fabric(strategy=FSDPStrategy(use_orig_params=False))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
print("setting up")
model, optimizer = fabric.setup(net, opt)
""",
        severity=Severity.ERROR,
        fixed="""
import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import FSDPStrategy
fabric = Fabric(strategy=FSDPStrategy(use_orig_params=False))
print("setting up")
model = fabric.setup_module(net)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
optimizer = fabric.setup_optimizers(opt)
""",
    ),
    Example(
        "FSDP with a model created under init_module(empty_init=True)",
        """
import torch
from lightning.fabric import Fabric
fabric = Fabric(strategy="fsdp")
with fabric.init_module(empty_init=True):
    model = torch.nn.Linear(4, 2)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
model, optimizer = fabric.setup(model, optimizer)
""",
        severity=Severity.ERROR,
        fixed="""
import torch
from lightning.fabric import Fabric
fabric = Fabric(strategy="fsdp")
with fabric.init_module(empty_init=True):
    model = torch.nn.Linear(4, 2)
model = fabric.setup_module(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)
""",
    ),
    Example(
        "ModelParallelStrategy: joint setup trains nothing",
        """
import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import ModelParallelStrategy
fabric = Fabric(strategy=ModelParallelStrategy(parallelize_fn=parallelize))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
model, optimizer = fabric.setup(model, optimizer)
""",
        severity=Severity.WARNING,
        fixed="""
import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import ModelParallelStrategy
fabric = Fabric(strategy=ModelParallelStrategy(parallelize_fn=parallelize))
model = fabric.setup_module(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)
""",
    ),
    Example(
        "fsdp on TPU becomes XLAFSDP",
        """
from lightning.fabric import Fabric
fabric = Fabric(accelerator="tpu", strategy="fsdp")
model, optimizer = fabric.setup(model, optimizer)
""",
        severity=Severity.ERROR,
    ),
    Example(
        "no fix: the DeepSpeed branch needs joint setup",
        """
import torch
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed" if zero else "xla_fsdp")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
model, optimizer = fabric.setup(model, optimizer)
""",
        severity=Severity.WARNING,
    ),
    Example(
        "no fix: parameter groups",
        """
import torch
from lightning.fabric import Fabric
fabric = Fabric(strategy="xla_fsdp")
groups = [{"params": model.encoder.parameters(), "lr": 1e-5}, {"params": model.head.parameters()}]
optimizer = torch.optim.AdamW(groups, lr=1e-4)
model, optimizer = fabric.setup(model, optimizer)
""",
        severity=Severity.ERROR,
    ),
]
