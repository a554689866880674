"""FAB001's documentation and examples (the examples are also its tests)."""

from __future__ import annotations

from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.rule import Example

DOC = """
## What it does
Flags `fabric.setup_optimizers(...)` on a Lightning `Fabric` whose strategy is `DeepSpeedStrategy`
or `XLAStrategy` (a string such as `"deepspeed_stage_3"` or `"xla"`, an instance of either class
or of a subclass, or `accelerator="tpu"` on more than one device). It is an **error** when every
path through the code gives such a strategy, and a **warning** when it is one of the strategies
the code can choose (a conditional expression, an `if`/`else`, a default argument).

## Why is this bad?
Under these strategies the model and its optimizer(s) must be set up together. Lightning checks it
in `Fabric.setup_optimizers`:

    RuntimeError: The `DeepSpeedStrategy` requires the model and optimizer(s) to be set up jointly
    through `.setup(model, optimizer, ...)`.

The error only comes at run time, often after a multi-node job has been queued and launched. At
DeepSpeed ZeRO stages 1 and 2 DeepSpeed itself fails even earlier, at `setup_module`
(`AssertionError: zero stage 2 requires an optimizer`).

## Example
```python
fabric = Fabric(strategy="deepspeed_stage_3")
fabric.launch()
model = fabric.setup_module(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)
```

## Use instead
```python
fabric = Fabric(strategy="deepspeed_stage_3")
fabric.launch()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
model, optimizer = fabric.setup(model, optimizer)
```

## Fix safety
The fix removes the module setup, moves the statements between the two calls above the new joint
call, and replaces `setup_optimizers` by `setup(model, optimizer, ...)`, keeping the targets'
names and the module setup's keyword arguments (`move_to_device`, `_reapply_compile`). The one-line
form `model, optimizer = fabric.setup_module(model), fabric.setup_optimizers(optimizer)` becomes
`model, optimizer = fabric.setup(model, optimizer)` when the optimizers are passed by name. The fix
is offered only when a def-use check proves the move keeps behaviour: the statements in between may
use the set-up model only through `.parameters()` / `.named_parameters()` (the same tensors before
and after setup; a renamed target is rewritten to the raw model), and must not rebind the model,
the targets or the Fabric, call Fabric methods that need the model set up (`load`, `backward` …),
or leave the block.

The fix is judged against **every** strategy the code can choose, as Lightning 2.6.6 treats joint
setup, not only the one that raises. No fix is offered (the message says why, and what to do by
hand: set up jointly only under `isinstance(fabric.strategy, (DeepSpeedStrategy, XLAStrategy))`)
when another possible strategy needs separate setup:

- `XLAFSDPStrategy` (`"xla_fsdp"`, or `"fsdp"` on TPU): joint setup raises `NotImplementedError`;
- `FSDPStrategy(use_orig_params=False)`: joint setup raises `ValueError`;
- `ModelParallelStrategy`: joint setup keeps the optimizer on the original parameters, so training
  silently changes no weights;
- `FSDPStrategy` (or a strategy that cannot be determined) when the model may hold meta-device
  parameters at the joint setup. After the rewrite every optimizer is built before the joint
  setup, and FSDP's joint setup refuses an optimizer over meta-device parameters
  ("The optimizer has references to the model's meta-device parameters…", Lightning 2.6.6
  `fabric/fabric.py:1208`, raised at 1211). Only FSDP and ModelParallel put parameters on the meta device under
  `fabric.init_module(empty_init=True)` (`strategies/fsdp.py:342`, `strategies/model_parallel.py:201`;
  the other strategies allocate them uninitialised on the device, `strategies/strategy.py:146`; DeepSpeed ZeRO-3 partitions
  them), and only FSDP's joint setup checks. So there is no fix when
  - the code moved above the joint setup reads parameters (`.parameters()` of the set-up or the
    raw model, anything's `.named_parameters()`, the raw model passed to a helper) and the file —
    or, when it does not, another module of the project, since a helper may build the model — may
    create parameters on the meta device (`fabric.init_module(empty_init=...)` unless `empty_init`
    is literally false, `torch.device("meta")`, `device="meta"`): after `setup_module` FSDP has
    materialised them, before it they are on the meta device;
  - the optimizer is built before the module setup from a model created inside such a `with` and
    not materialised (`to_empty`, `load_state_dict(..., assign=True)`): the separate setup
    already raises on that branch (`fabric.py:1237`, for every strategy) and the joint one would too, so the rewrite
    is no fix there; build the optimizer from the set-up model after `setup_module`. (This one
    is traced within the function only: an optimizer built before the setup from a model that a
    helper creates on the meta device keeps the fix, which leaves that branch failing as it did.)

No fix is offered either when the calls are in different blocks, the set-up model is used in
between, or DeepSpeed would get several optimizers. The fix is **safe** when every possible
strategy is known to accept joint setup; it is **unsafe** (offered, never applied by fix-all) when
the optimizer returned by `setup_optimizers` was discarded, some strategy cannot be determined (a
project's own `Strategy` / `ParallelStrategy` subclass included), or an argument that decides it
(FSDP's `use_orig_params`, given through `**kwargs` or a `FSDPStrategy` subclass) is not known
statically. A model created on the meta device by an installed library (outside the project's
files) is not seen.

## Which strategies
Raises (flagged): `deepspeed`, `deepspeed_stage_1`, `deepspeed_stage_1_offload`,
`deepspeed_stage_2`, `deepspeed_stage_2_offload`, `deepspeed_stage_3`, `deepspeed_stage_3_offload`,
`deepspeed_stage_3_offload_nvme`, `xla`, `DeepSpeedStrategy(...)`, `XLAStrategy(...)` and their
subclasses, `accelerator="tpu"` (or `XLAAccelerator()`) with `devices="auto"` or more than one
device. Silent: `xla_fsdp`/`XLAFSDPStrategy`, `fsdp`, `ddp*`, `dp`, `single_xla`, one TPU device,
`strategy="fsdp"` on TPU (becomes XLAFSDP), the default strategy, the Trainer's
`lightning.pytorch.strategies.*` classes, joint `setup(model, optimizer)`, and `setup(model)` or
`setup_module(model)` alone.
"""


SUMMARY = "Model and optimizer set up separately under DeepSpeed/XLA"


VALID = [
    Example(
        "joint setup under DeepSpeed",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed")
model, optimizer = fabric.setup(model, optimizer)
""",
    ),
    Example(
        "separated setup under FSDP",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="fsdp")
model = fabric.setup_module(model)
optimizer = fabric.setup_optimizers(optimizer)
""",
    ),
    Example(
        "separated setup under XLAFSDP",
        """
import lightning as L
fabric = L.Fabric(strategy="xla_fsdp")
model = fabric.setup_module(model)
optimizer = fabric.setup_optimizers(optimizer)
""",
    ),
    Example(
        "a single TPU device",
        """
from lightning.fabric import Fabric
fabric = Fabric(accelerator="tpu", devices=1)
model = fabric.setup_module(model)
optimizer = fabric.setup_optimizers(optimizer)
""",
    ),
    Example(
        "the Trainer's DeepSpeedStrategy is not Fabric's",
        """
from lightning.pytorch.strategies import DeepSpeedStrategy
from lightning.fabric import Fabric
fabric = Fabric(strategy=DeepSpeedStrategy())
model = fabric.setup_module(model)
optimizer = fabric.setup_optimizers(optimizer)
""",
    ),
    Example(
        "a project's own class named Fabric",
        """
class Fabric:
    def __init__(self, strategy): ...
fabric = Fabric(strategy="deepspeed")
optimizer = fabric.setup_optimizers(optimizer)
""",
    ),
    Example(
        "separated setup under FSDPStrategy(use_orig_params=False)",
        """
from lightning.fabric import Fabric
from lightning.fabric.strategies import FSDPStrategy
fabric = Fabric(strategy=FSDPStrategy(use_orig_params=False))
model = fabric.setup_module(model)
optimizer = fabric.setup_optimizers(optimizer)
""",
    ),
    Example(
        "one-line separated setup under DDP",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="ddp")
model, optimizer = fabric.setup_module(model), fabric.setup_optimizers(optimizer)
""",
    ),
    Example(
        "model-only setup is legal",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed_stage_3")
model = fabric.setup_module(model)
""",
    ),
]


INVALID = [
    Example(
        "DeepSpeed string",
        """
import torch
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed_stage_3")
model = fabric.setup_module(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)
""",
        severity=Severity.ERROR,
        fixed="""
import torch
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed_stage_3")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
model, optimizer = fabric.setup(model, optimizer)
""",
    ),
    Example(
        "XLAStrategy instance through an alias",
        """
import lightning as L
from lightning.fabric.strategies import XLAStrategy as X
fabric = L.Fabric(strategy=X())
net = fabric.setup(net)
opt = fabric.setup_optimizers(opt)
""",
        severity=Severity.ERROR,
        fixed="""
import lightning as L
from lightning.fabric.strategies import XLAStrategy as X
fabric = L.Fabric(strategy=X())
net, opt = fabric.setup(net, opt)
""",
    ),
    Example(
        "a strategy chosen by a condition",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed" if use_ds else "ddp")
model = fabric.setup_module(model)
optimizer = fabric.setup_optimizers(optimizer)
""",
        severity=Severity.WARNING,
        fixed="""
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed" if use_ds else "ddp")
model, optimizer = fabric.setup(model, optimizer)
""",
    ),
    Example(
        "one-line separated setup",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed_stage_2")
model, optimizer = fabric.setup_module(model), fabric.setup_optimizers(optimizer)
""",
        severity=Severity.ERROR,
        fixed="""
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed_stage_2")
model, optimizer = fabric.setup(model, optimizer)
""",
    ),
    Example(
        "no fix: the FSDP branch needs separate setup for a model built on the meta device",
        """
import torch
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed_stage_3" if zero else "fsdp")
with fabric.init_module(empty_init=True):
    model = torch.nn.Linear(4, 2)
model = fabric.setup_module(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)
""",
        severity=Severity.WARNING,
    ),
    Example(
        "no fix: the optimizer is built from the raw model after its setup, moved above it by the rewrite",
        """
import torch
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed" if zero else "fsdp")
with fabric.init_module(empty_init=True):
    model = torch.nn.Linear(4, 2)
wrapped = fabric.setup_module(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)
""",
        severity=Severity.WARNING,
    ),
    Example(
        "no fix: FSDPStrategy(use_orig_params=False) refuses joint setup",
        """
from lightning.fabric import Fabric
from lightning.fabric.strategies import FSDPStrategy
strategy = "deepspeed" if zero else FSDPStrategy(use_orig_params=False)
fabric = Fabric(strategy=strategy)
model = fabric.setup_module(model)
optimizer = fabric.setup_optimizers(optimizer)
""",
        severity=Severity.WARNING,
    ),
]
