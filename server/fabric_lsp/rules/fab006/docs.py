"""FAB006's documentation and examples (the examples are also its tests)."""

from __future__ import annotations

from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.rule import Example

SUMMARY = "A checkpoint call (`save`, `load`, `load_raw`) that fails at the first save or load"

DOC = """
## What it does
Flags the Fabric checkpoint calls Lightning 2.6.6 rejects, at the call:

- `fabric.save(state, path)` — the arguments swapped (the signature is `save(path, state,
  filter=None)`): the first is a dict (a display, a `.state_dict()` call, a name bound to a dict)
  and the second a path (a string, an f-string, a `Path(...)`, a name bound to a string);
- `fabric.save(..., filter=f)` where `f` is not a dict (a lambda, a function, a list), where a
  key of a `filter` dict display is not a key of the state's dict display, or where a filter
  value is not callable (`{"model": True}`);
- `filter=` under DeepSpeed, under FSDP with sharded checkpoints (`state_dict_type="sharded"`,
  the default) and under ModelParallel with distributed checkpoints
  (`save_distributed_checkpoint=True`, the default);
- under DeepSpeed, FSDP, ModelParallel and XLAFSDP (the strategies that checkpoint through the
  set-up model): a `save`/`load` state whose values are all certainly not modules (only
  `model.state_dict()`, numbers, strings …), a state holding two set-up models, and
  `fabric.load(path)` without a state — except DeepSpeed's `load_full_weights=True` at ZeRO
  stage 3, which loads like the plain strategies;
- `fabric.load_raw(path, optimizer)` under FSDP and ModelParallel (an optimizer set up by
  `setup`/`setup_optimizers`), and any `load_raw` under XLAFSDP;
- under DeepSpeed, `save` state keys that collide with DeepSpeed's engine state
  (`lr_scheduler`, `global_steps`, …; the set-up model and its optimizer are removed first):
  a **warning** (Lightning only warns).

The swapped arguments and a bad `filter=` fail under every strategy: an **error**. The others
are an **error** when every configuration the code can choose is one of those strategies (with
the checkpoint setting the check needs), a **warning** when one of them is.

## Why is this bad?
Each of these surfaces at the *first checkpoint* — after an epoch or N steps of a job that is
already running, possibly on many nodes — and loses that work. The state must hold the set-up
model itself (the engine, the FSDP or DTensor module) because those strategies gather or
shard its weights themselves; `model.state_dict()` is a plain dict to them.

## Lightning's message
- swapped arguments — `AttributeError: 'str' object has no attribute 'items'`
  (`lightning/fabric/strategies/strategy.py:410`; DeepSpeed, FSDP and ModelParallel fail
  differently, on the same call)
- `filter=` not a dict — `TypeError: Filter should be a dictionary, given …`
  (`lightning/fabric/fabric.py:858`); keys not in the state — `ValueError: The filter keys … are
  not present in the state keys ….` (`fabric.py:860`); a value not callable — `TypeError:
  Expected fabric.save(filter=...) for key … to be a callable, given …` (`fabric.py:865`)
- `filter=` under DeepSpeed — `TypeError: DeepSpeedStrategy.save_checkpoint(..., filter=...) is
  not supported because DeepSpeedStrategy manages the state serialization internally.`
  (`strategies/deepspeed.py:433-437`); FSDP — `NotImplementedError: FSDP doesn't support loading
  sharded filtered checkpoints, so saving them is disabled.` (`strategies/fsdp.py:434-438`);
  ModelParallel — `NotImplementedError: ModelParallelStrategy doesn't support loading distributed
  filtered checkpoints, so saving them is disabled.` (`strategies/model_parallel.py:256-261`)
- no (or two) set-up models in the state — `ValueError: Could not find a DeepSpeed model in the
  provided checkpoint state. …` / `Found multiple DeepSpeed engine modules in the given state. …`
  (`strategies/deepspeed.py:440-451`, `513-524`); the same for FSDP (`strategies/fsdp.py:448-459`,
  `546-558`), ModelParallel ("distributed model", `strategies/model_parallel.py:360-371`,
  `425-437`) and XLAFSDP (`strategies/xla_fsdp.py:431-442`, `549-558`)
- `load(path)` without a state — `ValueError: Got FSDPStrategy.load_checkpoint(..., state=None)
  but a state with at least  a model instance to reload is required. …`
  (`strategies/fsdp.py:522-527`, `deepspeed.py:504-509`, `model_parallel.py:281-286`,
  `xla_fsdp.py:527-532`)
- `load_raw(path, optimizer)` — `NotImplementedError: Loading a single optimizer object from a
  checkpoint is not supported yet with the FSDP strategy.` (`strategies/fsdp.py:537-540`,
  `model_parallel.py:294-297`; XLAFSDP for any object, `xla_fsdp.py:537-541`)
- colliding keys — `UserWarning: Your state has keys that collide with DeepSpeed's internal
  engine state. …` (`strategies/deepspeed.py:850-873`)

## Example
```python
fabric = Fabric(strategy="fsdp")
model, optimizer = fabric.setup(model, optimizer)
fabric.save(model.state_dict(), "model.pt")
ckpt = fabric.load("model.pt")
```

## Use instead
```python
fabric = Fabric(strategy="fsdp")
model, optimizer = fabric.setup(model, optimizer)
state = {"model": model, "optimizer": optimizer}
fabric.save("model.pt", state)
fabric.load("model.pt", state)
```

## Fix safety
Only the swapped arguments have a fix, and only where the first argument is a dict display or a
`.state_dict()` call and the second a string, an f-string or a `Path(...)`: the swap is
**safe** (the call raises as written; swapped, it is the call the author meant). Where either
is a name, no fix is offered (the name's value is inferred, not written). The other checks
have no automatic fix: which state or strategy setting the author wants is theirs to choose.

## Which strategies
Swapped arguments and bad `filter=`: every strategy. The state, `load(path)` and `load_raw`
checks: `DeepSpeedStrategy`, `FSDPStrategy`, `ModelParallelStrategy`, `XLAFSDPStrategy` (and
subclasses; `filter=` under FSDP only with `state_dict_type="sharded"`, under ModelParallel only
with `save_distributed_checkpoint=True`; DeepSpeed's `load` with `load_full_weights=True` at
ZeRO-3 is exempt). Silent: single device, DP, DDP and XLA, which save and load any dict.
"""

VALID = [
    Example(
        "save(path, state) with the set-up model under FSDP",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="fsdp")
fabric.launch()
model, optimizer = fabric.setup(model, optimizer)
state = {"model": model, "optimizer": optimizer, "step": 0}
fabric.save("ckpt", state)
fabric.load("ckpt", state)
""",
    ),
    Example(
        "a state_dict saved and loaded whole under DDP",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="ddp")
fabric.launch()
model, optimizer = fabric.setup(model, optimizer)
fabric.save("model.pt", {"model": model.state_dict()})
ckpt = fabric.load("model.pt")
""",
    ),
    Example(
        "filter= with FSDP full checkpoints",
        """
from lightning.fabric import Fabric
from lightning.fabric.strategies import FSDPStrategy
fabric = Fabric(strategy=FSDPStrategy(state_dict_type="full"))
fabric.launch()
model, optimizer = fabric.setup(model, optimizer)
fabric.save("ckpt.pt", {"model": model}, filter={"model": lambda k, v: "lora" in k})
""",
    ),
    Example(
        "torch.save(state_dict, path) is not Fabric's save",
        """
import torch
from lightning.fabric import Fabric
fabric = Fabric()
torch.save(model.state_dict(), "model.pt")
""",
    ),
    Example(
        "DeepSpeed with the engine's optimizer under 'optimizer'",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed")
fabric.launch()
model, optimizer = fabric.setup(model, optimizer)
fabric.save("ckpt", {"model": model, "optimizer": optimizer, "step": 3})
""",
    ),
    Example(
        "load_raw of a module under FSDP",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="fsdp")
fabric.launch()
model = fabric.setup_module(model)
fabric.load_raw("pretrained.pt", model)
""",
    ),
]

INVALID = [
    Example(
        "save(state, path): swapped arguments",
        """
from lightning.fabric import Fabric
fabric = Fabric()
model, optimizer = fabric.setup(model, optimizer)
fabric.save(model.state_dict(), "model.pth")
""",
        severity=Severity.ERROR,
        fixed="""
from lightning.fabric import Fabric
fabric = Fabric()
model, optimizer = fabric.setup(model, optimizer)
fabric.save("model.pth", model.state_dict())
""",
    ),
    Example(
        "filter= that is a lambda",
        """
from lightning.fabric import Fabric
fabric = Fabric()
model, optimizer = fabric.setup(model, optimizer)
fabric.save("ckpt.pt", {"model": model}, filter=lambda k, v: "lora" in k)
""",
        severity=Severity.ERROR,
    ),
    Example(
        "filter key not in the state",
        """
from lightning.fabric import Fabric
fabric = Fabric()
model, optimizer = fabric.setup(model, optimizer)
fabric.save("ckpt.pt", {"model": model}, filter={"weights": lambda k, v: True})
""",
        severity=Severity.ERROR,
    ),
    Example(
        "filter= under DeepSpeed",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed_stage_2")
fabric.launch()
model, optimizer = fabric.setup(model, optimizer)
fabric.save("ckpt", {"model": model}, filter={"model": lambda k, v: "adapter" in k})
""",
        severity=Severity.ERROR,
    ),
    Example(
        "model.state_dict() in the state under FSDP",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="fsdp")
fabric.launch()
model, optimizer = fabric.setup(model, optimizer)
fabric.save("ckpt", {"model": model.state_dict(), "step": 10})
""",
        severity=Severity.ERROR,
    ),
    Example(
        "load(path) without a state when the command line can choose FSDP",
        """
import sys
from lightning.fabric import Fabric
fabric = Fabric(strategy="fsdp" if "--fsdp" in sys.argv else "ddp")
fabric.launch()
model, optimizer = fabric.setup(model, optimizer)
ckpt = fabric.load("ckpt")
model.load_state_dict(ckpt["model"])
""",
        severity=Severity.WARNING,
    ),
    Example(
        "load_raw of an optimizer under FSDP",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="fsdp")
fabric.launch()
model, optimizer = fabric.setup(model, optimizer)
fabric.load_raw("optimizer.pt", optimizer)
""",
        severity=Severity.ERROR,
    ),
    Example(
        "two set-up models in one state under DeepSpeed",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed")
fabric.launch()
generator, g_opt = fabric.setup(generator, g_opt)
critic, c_opt = fabric.setup(critic, c_opt)
fabric.save("gan", {"generator": generator, "critic": critic})
""",
        severity=Severity.ERROR,
    ),
    Example(
        "state keys that collide with DeepSpeed's engine state",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed")
fabric.launch()
model, optimizer = fabric.setup(model, optimizer)
fabric.save("ckpt", {"model": model, "optimizer": optimizer, "lr_scheduler": scheduler})
""",
        severity=Severity.WARNING,
    ),
]
