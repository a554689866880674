"""FAB002's documentation and examples (the examples are tests)."""

from __future__ import annotations

from fabric_lsp.engine.model import Severity
from fabric_lsp.rules.base import Example

SUMMARY = (
    "Fabric collective (`save`, `load`, `barrier`, `broadcast`, `all_gather`, `all_reduce`) reached on some ranks only"
)

DOC = """
## What it does
Flags a call of a Lightning Fabric collective — `save`, `load`, `barrier`, `broadcast`,
`all_gather`, `all_reduce`, and `load_raw` under DeepSpeed, FSDP and ModelParallel (their
`load_checkpoint` broadcasts the path) — that only some processes reach, while the Fabric runs
several processes:

- inside `if fabric.global_rank == 0:` (or `is_global_zero`, `local_rank`, `node_rank`,
  `rank_zero_only.rank`, `torch.distributed.get_rank()`, `os.environ["LOCAL_RANK"]`, or a name
  bound to one of them), in either branch: `rank != 0` leaves rank 0 out just as `rank == 0`
  leaves the others out;
- after an early exit of the other ranks (`if not fabric.is_global_zero: return`);
- in a function decorated with `@rank_zero_only`, or one whose every call (in its module, and
  named by no other module) is itself reached on some ranks only;
- inside `with fabric.rank_zero_first():`.

It is an **error** when every configuration the code gives the Fabric runs several processes
(`devices=2` on CPU, `strategy="ddp"` with 8 GPUs …), and a **warning** when some configuration it
can choose does (`devices` from a command-line option, `accelerator="auto"`, which runs one
process on a CPU machine and one per GPU on a GPU machine).

## Why is this bad?
Every process of the group must enter a collective. `Fabric.save` and `Fabric.load` end in
`self.barrier()` (`lightning/fabric/fabric.py:867`, `fabric.py:915`); under FSDP, DeepSpeed and
ModelParallel they also broadcast the path and gather the state. A collective that only rank 0
enters waits for the others until the process-group timeout (30 minutes by default with NCCL), or
pairs with the next collective of the other ranks and desynchronises them (gloo then fails with
`Connection closed by peer … This is typically caused by a remote worker crashing`).
`with fabric.rank_zero_first():` (`fabric.py:711`) runs its body on rank 0 while the other ranks
wait on a barrier of its own process group: a collective inside the body waits forever.

## Lightning's message
None: the job hangs. With gloo: `RuntimeError: [.../gloo/transport/tcp/pair.cc] Connection closed
by peer [...]. This is typically caused by a remote worker crashing.` (reproduced in the
catalogue, Appendix A3; no `file:line` in Lightning: the collective is `fabric.py:867`).

## Example
```python
fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
fabric.launch()
model, optimizer = fabric.setup(model, optimizer)
if fabric.global_rank == 0:
    fabric.save("checkpoint.ckpt", {"model": model, "optimizer": optimizer})
```

## Use instead
```python
fabric.save("checkpoint.ckpt", {"model": model, "optimizer": optimizer})  # Fabric writes on rank 0
```
Work that really belongs to one rank (`torch.save`, `print`, creating a folder, uploading files)
stays under the guard; that is the correct pattern and is never flagged.

## Fix safety
The fix removes the `if` and dedents its body when the body is nothing but `fabric.save(...)`/
`fabric.load(...)` on one Fabric, the `if` has no `else` and its test reads only the rank
(`fabric.global_rank == 0`, `fabric.is_global_zero` …). Removing the guard around `save` is **safe**:
the strategy already decides who writes (`strategies/strategy.py:280`: rank 0 under DDP; every rank
its shard under FSDP). Removing it around `load` is **unsafe** (offered, not applied by `--fix`):
the other ranks now load the checkpoint too — the intended behaviour, but a change. No fix when
the block does anything else, the test reads more than the rank (`if epoch % 5 == 0 and
fabric.is_global_zero:` would save every epoch), or the guard is an early exit, a decorator or a
caller: the message says to move the call out of the guard.

## Which strategies
Flagged for every strategy that runs several processes (DDP and its spawn/fork variants, FSDP,
DeepSpeed, ModelParallel, XLA/XLAFSDP on several devices; any `world_size > 1`, `num_nodes`
included). `load_raw` only under DeepSpeed, FSDP and ModelParallel. Silent: one process
(`devices=1`, `SingleDeviceStrategy`, `DataParallelStrategy`), a Fabric whose configuration is not
known statically (a free command-line value, a config file, a Fabric received from outside the
project), `torch.save` and other non-Fabric calls under the guard, and a guarded call paired with
the same kind of call on the other ranks (`if rank == 0: fabric.save(...) else: fabric.barrier()`,
or the hand-written rank-zero-first `if rank != 0: fabric.barrier()` … `if rank == 0:
fabric.barrier()`). Not checked: `init_module` under DeepSpeed ZeRO-3 (partitioning is collective;
the stage is not in the configuration model yet).
"""

VALID = [
    Example(
        "torch.save under the rank guard",
        """
import torch
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
fabric.launch()
if fabric.global_rank == 0:
    torch.save(model.state_dict(), "model.pt")
fabric.barrier()
""",
    ),
    Example(
        "one process",
        """
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cpu", devices=1)
if fabric.is_global_zero:
    fabric.save("ckpt.pt", {"model": model})
""",
    ),
    Example(
        "the hand-written rank-zero-first pattern",
        """
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
fabric.launch()
if fabric.global_rank != 0:
    fabric.barrier()
prepare_data()
if fabric.global_rank == 0:
    fabric.barrier()
""",
    ),
    Example(
        "a guard on the world size is not a rank guard",
        """
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
fabric.launch()
if fabric.world_size > 1:
    fabric.barrier()
""",
    ),
]

INVALID = [
    Example(
        "save under `global_rank == 0`",
        """
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
fabric.launch()
if fabric.global_rank == 0:
    fabric.save("ckpt.pt", {"model": model})
""",
        severity=Severity.ERROR,
        fixed="""
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
fabric.launch()
fabric.save("ckpt.pt", {"model": model})
""",
    ),
    Example(
        "barrier after an early return of the other ranks",
        """
from lightning.fabric import Fabric

def evaluate(fabric, model):
    if not fabric.is_global_zero:
        return
    print(model)
    fabric.barrier()

fabric = Fabric(accelerator="cpu", devices=4)
fabric.launch()
evaluate(fabric, model)
""",
        severity=Severity.ERROR,
    ),
    Example(
        "all_reduce in a @rank_zero_only function, devices from the command line",
        """
import argparse
from lightning.fabric import Fabric
from lightning.fabric.utilities import rank_zero_only

parser = argparse.ArgumentParser()
parser.add_argument("--devices", type=int, default=2)
args = parser.parse_args()
fabric = Fabric(accelerator="cpu", devices=args.devices)
fabric.launch()

@rank_zero_only
def log_loss(loss):
    print(fabric.all_reduce(loss))
""",
        severity=Severity.WARNING,
    ),
    Example(
        "save inside rank_zero_first",
        """
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
fabric.launch()
with fabric.rank_zero_first():
    fabric.save("ckpt.pt", {"model": model})
""",
        severity=Severity.ERROR,
    ),
]
