"""FAB007's documentation and examples (the examples are tests)."""

from __future__ import annotations

from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.rule import Example

SUMMARY = (
    "`launch()` misuse: no function for a spawning launcher, `launch(main())`, a function that cannot take the "
    "Fabric, a missing or late `launch()`"
)

DOC = """
## What it does
Flags the ways `Fabric.launch` is misused, each where Lightning 2.6.6 raises:

1. `fabric.launch()` without a function when the strategy spawns its processes (`ddp_spawn`,
   `ddp_fork`, `ddp_notebook`, `DDPStrategy(start_method="spawn"|"fork"|"forkserver")`, `xla`,
   `xla_fsdp`, TPU with several devices) — at the `launch(` call;
2. `fabric.launch(main())` (also with arguments, `launch(train(fabric, cfg))`): the function is
   called at once, in one process, and `launch` gets its result — flagged when `main` is a `def`
   that certainly returns None;
3. `fabric.launch(main)` where `main` cannot take the Fabric (no parameter at all, or fewer
   positional parameters than the Fabric plus the extra arguments `launch` passes on);
4. a **missing or late `launch()`** for a strategy that needs one (anything but one device and
   `dp`): the first call that checks it (`setup`, `setup_module`, `setup_optimizers`,
   `setup_dataloaders`, `barrier`, `broadcast`, `all_gather`, `all_reduce`, `init_module`,
   `sharded_model`, and `save`/`load` through their final `barrier()`) — when `launch()` comes
   later in the same function (also `setup_dataloaders(...)` before `launch(main)` under a
   spawning strategy), or when no `launch()` (nor an overridden `run()`) on that Fabric is found
   anywhere in the workspace;
5. a `launch()` that runs only on several devices (`if fabric.world_size > 1: fabric.launch()`,
   `if torch.cuda.device_count() > 1:`, `if args.devices > 1:`) while the call after it needs a
   launch with one device too: `_validate_launched` exempts strategies, not device counts
   (`fabric.py:1193-1197`), so `strategy="ddp"` (or `fsdp`, `deepspeed` …) with one process
   raises. With the default strategy one device is `SingleDeviceStrategy`, exempt: silent.

### Which `launch()` counts
Only a `launch()` whose receiver can be that Fabric: the same `Fabric(...)` construction followed
through names, parameters, `self.fabric` attributes and returns, or a wrapper class whose
`__getattr__` forwards to it (`def __getattr__(self, name): return getattr(self.fabric, name)`:
`runner.launch()` and `runner.setup(...)` are calls on the Fabric). A receiver inference cannot
resolve still counts (it may be the launch) unless it is certainly something else: an object
made by a library outside the project (a Gradio `demo.launch()`, `gr.Blocks()`,
`demo.queue().launch()`) or a Lightning strategy's launcher (`strategy.launcher.launch(...)`,
`self._launcher.launch(...)`, as in Lightning's own source vendored in a repository).

Items 2 and 3 are errors on every path. Items 1 and 4 are errors where every configuration the
code gives the Fabric needs it, warnings where one it can choose does (`accelerator="auto"` on a
GPU machine, a command-line `--strategy`). Item 5 is an error when the test is the Fabric's own
`world_size` and every configuration has one process that needs a launch; a test of the
machine's device count or of another variable makes it a warning at most (the machine is never
known).

### Is the script meant for `fabric run`?
Under `fabric run` (`LT_CLI_USED=1`) `Fabric.__init__` sets the processes up itself
(`fabric.py:164-168`) and a missing `launch()` is correct — while calling `launch()` raises. Run
as `python script.py` or under `torchrun`, a script without `launch()` raises. fabric-lsp decides
from what the code and the repository show: when the script itself (a comment, a docstring) holds
a Fabric CLI command line (`fabric run [options] some_script.py`, `lightning run model …
script.py`), names the `lightning.fabric.cli` module or `LT_CLI_USED`, the script says how it is
run and a missing `launch()` is **not reported**. The same holds when another text file of the
workspace (README, `*.md`, `*.sh`, `*.slurm`/`*.sbatch`, YAML/TOML configs, a Makefile, a notebook,
a Python launcher that runs `["fabric", "run", ..., "/root/train.py"]` through `subprocess`) runs
**this very script** with the CLI — except on a TPU configuration, which the CLI cannot launch
(`cli.py:205`): that path runs without the CLI, and a missing `launch()` stays a **warning**.
When the workspace's commands run other scripts only, a missing `launch()` is a **warning** (the
script may be meant for the CLI; remember that `fabric run` sets the device count, default 1, so
`devices=4` in the code needs `--devices=4`). A command line
continued with `\\` over several lines (`lightning run model \\` / `--devices=4 \\` /
`train.py`) counts as one line. A sentence
that merely names `fabric run` (or Lightning's own hint, `fabric run --help`) is not such
evidence. Without any evidence it is an **error**. A late `launch()` is an error
either way (under the CLI, the `launch()` call itself raises).

## Why is this bad?
The launch errors come at run time, after the job was queued — and a late or missing launch
fails at the first setup call on every rank.

## Lightning's message
- `TypeError: To spawn processes with the `{Strategy}` strategy, `.launch()` needs to be called
  with a function that contains the code to launch in processes.` (`lightning/fabric/fabric.py:1006`)
- `TypeError: `Fabric.launch(...)` needs to be a callable, but got None. HINT: do
  `.launch(your_fn)` instead of `.launch(your_fn())`` (`fabric.py:996`)
- `TypeError: `Fabric.launch(function=...)` needs to take at least one argument. The launcher will
  pass in the `Fabric` object so you can use it inside the function.` (`fabric.py:1001`)
- `RuntimeError: To use Fabric with more than one device, you must call `.launch()` or use the
  CLI: `fabric run --help`.` (`fabric.py:1195`, from `_validate_launched()`)

## Example
```python
fabric = Fabric(accelerator="cpu", strategy="ddp_spawn", devices=2)
fabric.launch()
model, optimizer = fabric.setup(model, optimizer)
```

## Use instead
```python
def main(fabric):
    model, optimizer = fabric.setup(make_model(), make_optimizer())

fabric = Fabric(accelerator="cpu", strategy="ddp_spawn", devices=2)
fabric.launch(main)
```

## Fix safety
`launch(main())` → `launch(main)` is **safe** when `main` is a `def` with exactly one parameter
and the call passed nothing or only the Fabric: `launch` then calls it with the Fabric in every
process, as was meant. `launch(train(fabric, cfg, steps=2))` → `launch(train, cfg, steps=2)`
(the Fabric first, and `train` takes those arguments) is **unsafe**: `launch` passes the other
arguments on, but a spawning launcher pickles them for each process. When the function is not
given the Fabric first (`launch(report(cfg))`), the message says to add a first parameter for it
and offers no edit. No fix for the other cases: where the code that follows `launch()` belongs
in a function, where `launch()` should go, and what a function's parameters should be are
decisions the message leaves to you.

## Which strategies
Item 1: the strategies whose launcher is `_MultiProcessingLauncher` (every start method) or
`_XLALauncher`, as Lightning's connector picks them (`strategy="auto"` with one device is silent).
Item 4: every strategy but `SingleDeviceStrategy`, `SingleDeviceXLAStrategy` and
`DataParallelStrategy` (`fabric.py:1194`) — `ddp`, `ddp_spawn`, `fsdp`, `deepspeed`, … even with
`devices=1`. Silent: a Fabric whose configuration is not known statically, a Fabric received from
outside the project, a `launch` call on a receiver fabric-lsp cannot resolve (it may be the
launch), and Fabric subclasses whose `run()` is called (Lightning wraps it in a launch). Not
checked: `launch()` called in a script that is always run by `fabric run` (the CLI's own
`RuntimeError`), and the `if __name__ == "__main__":` guard that `spawn` needs.
"""

VALID = [
    Example(
        "launch(main) under ddp_spawn",
        """
from lightning.fabric import Fabric

def main(fabric):
    model = fabric.setup(make_model())

fabric = Fabric(accelerator="cpu", strategy="ddp_spawn", devices=2)
fabric.launch(main)
""",
    ),
    Example(
        "one device needs no launch",
        """
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cpu", devices=1)
model = fabric.setup(model)
""",
    ),
    Example(
        "launch() before setup under ddp",
        """
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
fabric.launch()
model = fabric.setup(model)
""",
    ),
    Example(
        "launch(partial(main, cfg)) is a callable",
        """
from functools import partial
from lightning.fabric import Fabric

def main(fabric, cfg):
    fabric.setup(make_model(cfg))

fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
fabric.launch(partial(main, cfg=cfg))
""",
    ),
    Example(
        "calls through a wrapper whose __getattr__ forwards to the Fabric",
        """
from lightning.fabric import Fabric

class Runner:
    def __init__(self):
        self.fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)

    def __getattr__(self, name):
        return getattr(self.fabric, name)

runner = Runner()
runner.launch()
model = runner.setup(model)
""",
    ),
    Example(
        "launch() only on several devices, where one device needs none",
        """
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cuda", devices=1)
if fabric.world_size > 1:
    fabric.launch()
model = fabric.setup(model)
""",
    ),
]

INVALID = [
    Example(
        "launch() without a function under ddp_spawn",
        """
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cpu", strategy="ddp_spawn", devices=2)
fabric.launch()
""",
        severity=Severity.ERROR,
    ),
    Example(
        "launch(main()) calls main at once",
        """
from lightning.fabric import Fabric

def main(fabric):
    fabric.setup(make_model())

fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
fabric.launch(main(fabric))
""",
        severity=Severity.ERROR,
        fixed="""
from lightning.fabric import Fabric

def main(fabric):
    fabric.setup(make_model())

fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
fabric.launch(main)
""",
    ),
    Example(
        "a function without a parameter for the Fabric",
        """
from lightning.fabric import Fabric

def train():
    print("training")

fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
fabric.launch(train)
""",
        severity=Severity.ERROR,
    ),
    Example(
        "setup before launch",
        """
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
model = fabric.setup(model)
fabric.launch()
""",
        severity=Severity.ERROR,
    ),
    Example(
        "no launch at all, devices chosen by accelerator='auto'",
        """
from lightning.fabric import Fabric
fabric = Fabric()
model, optimizer = fabric.setup(model, optimizer)
""",
        severity=Severity.WARNING,
    ),
    Example(
        "setup_dataloaders before launch(main) under ddp_spawn",
        """
from lightning.fabric import Fabric

def main(fabric, loader):
    model = fabric.setup(make_model())

fabric = Fabric(accelerator="cpu", strategy="ddp_spawn", devices=2)
loader = fabric.setup_dataloaders(make_loader())
fabric.launch(main, loader)
""",
        severity=Severity.ERROR,
    ),
    Example(
        "launch() only if the world size is above one, with DDP on one device",
        """
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cuda", strategy="ddp", devices=1)
if fabric.world_size > 1:
    fabric.launch()
model = fabric.setup(model)
""",
        severity=Severity.ERROR,
    ),
    Example(
        "a Gradio demo's launch() does not launch the Fabric",
        """
import gradio as gr
from lightning.fabric import Fabric
fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
model = fabric.setup(model)

def predict(text):
    return str(model(text))

demo = gr.Interface(fn=predict, inputs="text", outputs="text")
demo.launch()
""",
        severity=Severity.ERROR,
    ),
]
