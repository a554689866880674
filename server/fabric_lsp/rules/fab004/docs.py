"""FAB004's documentation and examples (the examples are also its tests)."""

from __future__ import annotations

from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.rule import Example

SUMMARY = "`loss.backward()` bypasses Fabric where its precision or strategy requires `fabric.backward(loss)`"

DOC = """
## What it does
Flags `loss.backward()` where `loss` is computed by a model set up with `fabric.setup(...)` or
`fabric.setup_module(...)` (called directly, through `.forward`, or handed to a helper such as
`compute_loss(model, batch)`; followed through the assignments of the function, `self.<attr>`
in the class, parameters at their call sites) and that Fabric's precision plugin is one that
overrides `backward`: `MixedPrecision` (`precision="16-mixed"` or `"bf16-mixed"`),
`DeepSpeedPrecision` (every DeepSpeed strategy) or `FSDPPrecision` (every FSDP strategy). It
is an **error** when every configuration the code can choose has such a plugin, a **warning**
when one of them has (a CLI choice, a branch, a default).

## Why is this bad?
`_FabricModule.forward` hooks every output tensor that requires grad; when the gradient reaches
it outside `fabric.backward`, and the strategy or precision plugin overrides `backward`,
Lightning raises (since 2.3):

## Lightning's message
    RuntimeError: The current strategy and precision selection requires you to call
    `fabric.backward(loss)` instead of `loss.backward()`.

(`lightning/fabric/wrappers.py:368-373`, `_backward_hook`; the condition is computed in
`_FabricModule._register_backward_hook`, `wrappers.py:230-240`.) Before 2.3 there was no check:
the gradient scaler or DeepSpeed's engine were silently skipped. The rule follows the version
of Lightning installed in the analysed environment (`lightning-version` setting) and is silent
before 2.3.

## Example
```python
fabric = Fabric(precision="bf16-mixed")
model, optimizer = fabric.setup(model, optimizer)
loss = criterion(model(x), y)
loss.backward()
```

## Use instead
```python
fabric = Fabric(precision="bf16-mixed")
model, optimizer = fabric.setup(model, optimizer)
loss = criterion(model(x), y)
fabric.backward(loss)
```

## Fix safety
The fix rewrites `t.backward(*args, **kwargs)` to `fabric.backward(t, *args, **kwargs)`, naming
a Fabric expression that is in scope at the call (the receiver of the `setup` call in the same
function, a parameter, `self.<attr>` or a global that the analysis proves is the same Fabric).
It is **safe**: `fabric.backward` calls `t.backward(*args, **kwargs)` through the precision
plugin, so gradients are the same (scaled where the plugin scales them). No fix is offered when
no expression for that Fabric is in scope (pass the Fabric to the function), or when DeepSpeed
is possible with several set-up models and the loss does not come from exactly one of them
(`fabric.backward` then needs `model=`, see FAB005).

## Which strategies
Raises (flagged): `precision="16-mixed"`/`"bf16-mixed"` (and their legacy spellings) with any
strategy; every DeepSpeed and FSDP strategy with any precision (their plugins override
`backward`). Silent: `32-true`, `16-true`, `bf16-true`, `64-true`, `transformer-engine` under the
default, DDP, DP, XLA, XLAFSDP and model-parallel strategies; a loss that no set-up model
computes (`model.module(x)` bypasses the wrapper and installs no hook); configurations in which
`Fabric(...)` itself raises. A precision or strategy not known statically gives no error (a
hint with `report-unknown`).
"""

VALID = [
    Example(
        "full precision under DDP",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="ddp", precision="32-true")
model, optimizer = fabric.setup(model, optimizer)
loss = model(x).sum()
loss.backward()
""",
    ),
    Example(
        "bf16-true has no backward hook",
        """
import lightning as L
fabric = L.Fabric(precision="bf16-true")
model = fabric.setup_module(model)
model(x).mean().backward()
""",
    ),
    Example(
        "fabric.backward under mixed precision",
        """
from lightning.fabric import Fabric
fabric = Fabric(precision="16-mixed")
model, optimizer = fabric.setup(model, optimizer)
loss = model(x).sum()
fabric.backward(loss)
""",
    ),
    Example(
        "a loss that no set-up model computes",
        """
from lightning.fabric import Fabric
fabric = Fabric(precision="bf16-mixed")
model, optimizer = fabric.setup(model, optimizer)
probe = torch.nn.Linear(4, 1)
probe(x).sum().backward()
""",
    ),
    Example(
        "a project's own class named Fabric",
        """
class Fabric:
    def __init__(self, precision): ...
    def setup(self, model): return model
fabric = Fabric(precision="bf16-mixed")
model = fabric.setup(model)
model(x).sum().backward()
""",
    ),
]

INVALID = [
    Example(
        "mixed precision",
        """
from lightning.fabric import Fabric
fabric = Fabric(precision="bf16-mixed")
model, optimizer = fabric.setup(model, optimizer)
loss = criterion(model(x), y)
loss.backward()
""",
        severity=Severity.ERROR,
        fixed="""
from lightning.fabric import Fabric
fabric = Fabric(precision="bf16-mixed")
model, optimizer = fabric.setup(model, optimizer)
loss = criterion(model(x), y)
fabric.backward(loss)
""",
    ),
    Example(
        "FSDP with full precision, arguments kept",
        """
import lightning as L
fabric = L.Fabric(strategy="fsdp", devices=2)
fabric.launch()
model = fabric.setup_module(model)
out = model(batch)
(out.loss / 4).backward(retain_graph=True)
""",
        severity=Severity.ERROR,
        fixed="""
import lightning as L
fabric = L.Fabric(strategy="fsdp", devices=2)
fabric.launch()
model = fabric.setup_module(model)
out = model(batch)
fabric.backward(out.loss / 4, retain_graph=True)
""",
    ),
    Example(
        "a precision the command line can choose, in a function the script calls",
        """
import argparse
from lightning.fabric import Fabric

def train(fabric, model, optimizer, batch):
    loss = model(batch).sum()
    loss.backward()
    optimizer.step()

parser = argparse.ArgumentParser()
parser.add_argument("--precision", choices=["32-true", "16-mixed"], default="32-true")
args = parser.parse_args()
fabric = Fabric(accelerator="cuda", precision=args.precision)
model, optimizer = fabric.setup(model, optimizer)
train(fabric, model, optimizer, batch)
""",
        severity=Severity.WARNING,
        fixed="""
import argparse
from lightning.fabric import Fabric

def train(fabric, model, optimizer, batch):
    loss = model(batch).sum()
    fabric.backward(loss)
    optimizer.step()

parser = argparse.ArgumentParser()
parser.add_argument("--precision", choices=["32-true", "16-mixed"], default="32-true")
args = parser.parse_args()
fabric = Fabric(accelerator="cuda", precision=args.precision)
model, optimizer = fabric.setup(model, optimizer)
train(fabric, model, optimizer, batch)
""",
    ),
]
