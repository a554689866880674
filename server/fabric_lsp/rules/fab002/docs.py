"""FAB002's documentation and examples (the examples are tests)."""

from __future__ import annotations

from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.rule import Example

SUMMARY = (
    "Collective reached on some ranks only: a Fabric collective (`save`, `load`, `barrier`, `broadcast`, "
    "`all_gather`, `all_reduce`), directly or through a helper, a `torch.distributed` one, or a sharded "
    "model's forward"
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

It also flags a call under such a guard that is not a Fabric method but reaches a collective:

- a **helper** whose body is (or calls) a collective — `save_checkpoint(fabric, state)` called on
  every rank in one place and under `if fabric.global_rank == 0:` in another: the guarded call is
  reported, with a note at the collective inside the helper. Helpers are followed across the
  module's functions and into other modules of the project that inference resolves, 3 calls deep;
  a call the helper itself guards is judged where it stands;
- a **raw `torch.distributed` collective** (`dist.barrier()`, `dist.all_reduce`,
  `broadcast_object_list`, `all_gather_object`, …, `FSDP.summon_full_params`), whatever the
  strategy, when several processes run;
- an **implicit collective of a sharded model**: under FSDP (any `sharding_strategy` but
  `NO_SHARD`), DeepSpeed ZeRO stage 3 and ModelParallel, the forward of the model returned by
  `fabric.setup(...)`/`setup_module(...)` gathers its parameters from every rank — `model(x)`,
  `model.forward(x)`, `model.generate(...)` (a method that runs the model) and sampling helpers
  that call it (`generate_example(fabric, model, ...)`, the most reported Fabric hang); so does
  `model.state_dict()` under a sharding FSDP with an `auto_wrap_policy` (the wrapped submodules
  gather the full state dict).

It is an **error** when every configuration the code gives the Fabric runs several processes
(`devices=2` on CPU, `strategy="ddp"` with 8 GPUs …), and a **warning** when some configuration it
can choose does (`devices` from a command-line option, `accelerator="auto"`, which runs one
process on a CPU machine and one per GPU on a GPU machine).

An implicit collective is an **error** only when every configuration shards *and* runs several
processes whose number is written (`devices="auto"` takes the machine's GPU count, never known
statically: a warning; the same holds for a `torch.distributed` collective, whatever the
strategy); a **warning** when some configuration the code can choose shards
(`strategy="fsdp" if args.fsdp else "ddp"`); nothing otherwise — DDP's forward is local
(`strategies/ddp.py:130` wraps the module in `DistributedDataParallel`), and DeepSpeed ZeRO stages
1 and 2 keep whole parameters on every rank.

A configuration is only counted where the branch that chose it allows it: with
`strategy = "ddp" if args.gpus > 1 else "auto"` and `devices=args.gpus`, the DDP branch runs
several processes, so a rank-guarded `fabric.save` there is a warning (the `"auto"` branch runs
one).

## Why is this bad?
Every process of the group must enter a collective. `Fabric.save` and `Fabric.load` end in
`self.barrier()` (`lightning/fabric/fabric.py:867`, `fabric.py:915`); under FSDP, DeepSpeed and
ModelParallel they also broadcast the path and gather the state. A collective that only rank 0
enters waits for the others until the process-group timeout (30 minutes by default with NCCL), or
pairs with the next collective of the other ranks and desynchronises them (gloo then fails with
`Connection closed by peer … This is typically caused by a remote worker crashing`).
`with fabric.rank_zero_first():` (`fabric.py:711`) runs its body on rank 0 while the other ranks
wait on a barrier of its own process group: a collective inside the body waits forever.
A sharded model's forward is a collective too: `_FabricModule.forward` runs the strategy's wrapper
(`wrappers.py:130-136`) — `FullyShardedDataParallel` under FSDP (`strategies/fsdp.py:298-303`),
the DeepSpeed engine partitioning parameters at stage 3 (`strategies/deepspeed.py:324-325`), the
`parallelize_fn` of ModelParallel (`strategies/model_parallel.py:185`) — and each forward
all-gathers the parameter shards, so `model(x)` on rank 0 alone waits for ranks that never join.

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
caller: the message says to move the call out of the guard. A helper call, a `torch.distributed`
collective or a sharded model's forward gets no fix: run it on every rank and keep only the
printing or writing under the guard (`fabric.print` already prints on rank 0 alone).

## Which strategies
Flagged for every strategy that runs several processes (DDP and its spawn/fork variants, FSDP,
DeepSpeed, ModelParallel, XLA/XLAFSDP on several devices; any `world_size > 1`, `num_nodes`
included). `load_raw` only under DeepSpeed, FSDP and ModelParallel. Silent: one process
(`devices=1`, `SingleDeviceStrategy`, `DataParallelStrategy`), a Fabric whose configuration is not
known statically (a free command-line value, a config file, a Fabric received from outside the
project), `torch.save` and other non-Fabric calls under the guard, and a guarded call paired with
the same kind of call on the other ranks (`if rank == 0: fabric.save(...) else: fabric.barrier()`,
or the hand-written rank-zero-first `if rank != 0: fabric.barrier()` … `if rank == 0:
fabric.barrier()`, also with `dist.barrier()`). Not checked: `init_module` under DeepSpeed ZeRO-3 (partitioning is collective),
a DDP model's forward where torch broadcasts the module's buffers (a model with buffers, such as
BatchNorm, after a training forward: `DistributedDataParallel._pre_forward` syncs them from rank 0;
whether it does depends on the module and `broadcast_buffers`, which inference does not see), the
XLA strategies (their collectives are lazy), and an FSDP/DeepSpeed configuration whose sharding
is not known statically (a `sharding_strategy` or DeepSpeed `config` from a variable: silent).
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
        "the forward of a DDP model on rank 0 (DDP's forward is local)",
        """
import torch
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
fabric.launch()
model = fabric.setup(torch.nn.Linear(8, 8))
if fabric.global_rank == 0:
    with torch.no_grad():
        print(model(torch.ones(1, 8)))
""",
    ),
    Example(
        "the forward of an FSDP model on every rank, printed on rank 0",
        """
import torch
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cuda", devices=2, strategy="fsdp")
fabric.launch()
model = fabric.setup(torch.nn.Linear(8, 8))
with torch.no_grad():
    sample = model(torch.ones(1, 8, device=fabric.device))
if fabric.global_rank == 0:
    print(sample)
""",
    ),
    Example(
        "the forward of a DeepSpeed ZeRO-2 model on rank 0 (whole parameters on every rank)",
        """
import torch
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cuda", devices=2, strategy="deepspeed_stage_2")
fabric.launch()
model, optimizer = fabric.setup(model, optimizer)
if fabric.is_global_zero:
    print(model(batch))
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
    Example(
        "a helper that saves, called on every rank and on rank 0",
        """
from lightning.fabric import Fabric

def save_checkpoint(fabric, state):
    fabric.save("checkpoint.ckpt", state)

fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
fabric.launch()
save_checkpoint(fabric, {"step": 0})
if fabric.global_rank == 0:
    save_checkpoint(fabric, {"step": 1})
""",
        severity=Severity.ERROR,
    ),
    Example(
        "save under a rank guard, DDP chosen by the GPU count",
        """
import argparse
from lightning.fabric import Fabric
parser = argparse.ArgumentParser()
parser.add_argument("--gpus", type=int, default=1)
args = parser.parse_args()
strategy = "ddp" if args.gpus > 1 else "auto"
fabric = Fabric(devices=args.gpus, strategy=strategy)
fabric.launch()
if fabric.global_rank == 0:
    fabric.save("ckpt.pt", {"model": model})
""",
        severity=Severity.WARNING,
        fixed="""
import argparse
from lightning.fabric import Fabric
parser = argparse.ArgumentParser()
parser.add_argument("--gpus", type=int, default=1)
args = parser.parse_args()
strategy = "ddp" if args.gpus > 1 else "auto"
fabric = Fabric(devices=args.gpus, strategy=strategy)
fabric.launch()
fabric.save("ckpt.pt", {"model": model})
""",
    ),
    Example(
        "an FSDP model's forward in a sampling helper called on rank 0 only",
        """
import torch
from lightning.fabric import Fabric

def generate_example(fabric, model, prompt):
    with torch.no_grad():
        fabric.print(model(prompt))

fabric = Fabric(accelerator="cuda", devices=2, strategy="fsdp")
fabric.launch()
model = fabric.setup(torch.nn.Linear(8, 8))
prompt = torch.ones(1, 8, device=fabric.device)
if fabric.global_rank == 0:
    generate_example(fabric, model, prompt)
""",
        severity=Severity.ERROR,
    ),
    Example(
        "a DeepSpeed ZeRO-3 model's generate on rank 0, devices from the machine",
        """
from lightning.fabric import Fabric
from transformers import AutoModelForCausalLM
fabric = Fabric(accelerator="cuda", strategy="deepspeed_stage_3")
fabric.launch()
model = AutoModelForCausalLM.from_pretrained("gpt2")
model, optimizer = fabric.setup(model, optimizer)
if fabric.is_global_zero:
    print(model.generate(input_ids, max_new_tokens=20))
""",
        severity=Severity.WARNING,
    ),
    Example(
        "a raw torch.distributed barrier on rank 0",
        """
import torch.distributed as dist
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
fabric.launch()
if fabric.global_rank == 0:
    prepare_files()
    dist.barrier()
""",
        severity=Severity.ERROR,
    ),
]
