"""FAB011's documentation and examples (the examples are also its tests)."""

from __future__ import annotations

from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.rule import Example

DOC = """
## What it does
Checks `Fabric(...)` calls that a Jupyter notebook runs in its own process. In a notebook,
Lightning refuses every strategy whose launcher is not fork-based: `ddp`, `ddp_spawn`, `fsdp`,
`deepspeed*`, `DDPStrategy(start_method="spawn")`, … (`ddp_notebook`/`ddp_fork`, `dp`, single-device
strategies and XLA are allowed). The configuration is resolved as Lightning 2.6.6's connector
resolves it, on each kind of machine the code can mean (`accelerator="auto"`: a CPU machine and a
CUDA machine), in a notebook. It is an **error** when the `Fabric(...)` call runs when the
notebook runs (at its top level, or in a function a cell calls) and every configuration the code
can choose is refused; a **warning** when one the code visibly can choose is refused, or when the
call is in a function the notebook does not visibly call (it may run in a process of its own).
Arguments fabric-lsp cannot see never make an error.

Only notebooks (`.ipynb` files) are checked: the same code in a `.py` script is fine.

It also checks `fabric.launch(fn)` with a fork-based launcher (`ddp_notebook`, `ddp_fork`) on
GPUs after a statement the notebook runs at its top level that certainly initialises CUDA (`.cuda()`,
`.to("cuda")`, `device="cuda"`, `torch.cuda.set_device(...)` …; device queries such as
`torch.cuda.is_available()` do not count): the forked processes fail with `RuntimeError: Cannot
re-initialize CUDA in forked subprocess` (PyTorch's check in the child;
`strategies/launchers/multiprocessing.py:191-219` words it the same). Always a **warning**: the
cells may have run in another order. No fix: move the CUDA use into the launched function.

## Why is this bad?
`Fabric(...)` raises `RuntimeError` the moment the cell runs; multi-process training in a
notebook needs the fork-based launcher (`strategy="ddp_notebook"` with `fabric.launch(fn)`), or
the code moved to a script.

## Lightning's message
`` `Fabric(strategy='ddp')` is not compatible with an interactive environment. Run your code as a
script, or choose one of the compatible strategies: `Fabric(strategy='dp'|'ddp_notebook')`. In case
you are spawning processes yourself, make sure to include the Fabric creation inside the worker
function. `` — `lightning/fabric/connector.py:522-530` (2.6.6; the launchers' `is_interactive_compatible`:
`strategies/launchers/multiprocessing.py:78`, `subprocess_script.py:88`, `xla.py:55`).

## Example
```python
# a notebook cell
fabric = Fabric(accelerator="cuda", devices=2, strategy="ddp")
fabric.launch(train)
```

## Use instead
```python
fabric = Fabric(accelerator="cuda", devices=2, strategy="ddp_notebook")
fabric.launch(train)
```

## Fix safety
A **safe** fix turns the literal `"ddp"` into `"ddp_notebook"` (the same `DDPStrategy` with the
fork launcher) only where that is equivalent: the strategy is that literal on every path, every
`launch` of the Fabric in the notebook passes the function to run (`ddp_notebook` needs
`fabric.launch(fn)`, fabric.py:1006), and no CUDA use is visible before the launch (a fork after
CUDA initialisation fails, launchers/multiprocessing.py:209). Otherwise no fix is offered and the
message says why; nothing is offered for `ddp_spawn`, FSDP or DeepSpeed, which have no
fork-based equivalent. `ddp_notebook` does not exist on Windows (no fork, connector.py:429).

## Which strategies
Refused in a notebook: every strategy with the subprocess-script launcher (`ddp`, `fsdp`,
`deepspeed*`, `model_parallel`, DDP on CPU chosen for `dp`) or the spawn/forkserver launcher
(`ddp_spawn`, `ddp_fork` variants started with `spawn`). Allowed: `ddp_notebook`, `ddp_fork`,
`dp` on GPUs, single-device strategies, XLA, and any strategy under a cluster environment that
creates the processes itself (SLURM, torchelastic).
"""


NOTEBOOK = "example.ipynb"  # where the examples are analysed: only notebooks are checked


VALID = [
    Example(
        "the fork-based DDP strategy for notebooks",
        """
        from lightning.fabric import Fabric

        fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp_notebook")
        """,
        path=NOTEBOOK,
    ),
    Example(
        "a single device",
        """
        from lightning.fabric import Fabric

        fabric = Fabric(accelerator="cuda", devices=1)
        """,
        path=NOTEBOOK,
    ),
    Example(
        "CUDA used inside the launched function of a fork-based launch",
        """
        from lightning.fabric import Fabric


        def train(fabric):
            model = fabric.to_device(make_model())
            model.cuda()


        fabric = Fabric(accelerator="cuda", devices=2, strategy="ddp_notebook")
        fabric.launch(train)
        """,
        path=NOTEBOOK,
    ),
    Example(
        "DDP in a script (only notebooks are checked)",
        """
        from lightning.fabric import Fabric

        fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
        fabric.launch()
        """,
        path="train.py",
    ),
]


INVALID = [
    Example(
        "DDP in a notebook",
        """
        from lightning.fabric import Fabric


        def train(fabric):
            pass


        fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
        fabric.launch(train)
        """,
        severity=Severity.ERROR,
        path=NOTEBOOK,
        fixed="""
        from lightning.fabric import Fabric


        def train(fabric):
            pass


        fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp_notebook")
        fabric.launch(train)
        """,
    ),
    Example(
        "a cell moved a model to the GPU before a fork-based launch (a warning: no fix)",
        """
        import torch
        from lightning.fabric import Fabric

        model = torch.nn.Linear(2, 2).cuda()


        def train(fabric):
            pass


        fabric = Fabric(accelerator="cuda", devices=2, strategy="ddp_notebook")
        fabric.launch(train)
        """,
        severity=Severity.WARNING,
        path=NOTEBOOK,
    ),
    Example(
        "DeepSpeed in a notebook (no fork-based equivalent: no fix)",
        """
        from lightning.fabric import Fabric

        fabric = Fabric(accelerator="cuda", devices=2, strategy="deepspeed_stage_2")
        """,
        severity=Severity.ERROR,
        path=NOTEBOOK,
    ),
    Example(
        "DDP or FSDP chosen by a flag, inside a function (a warning: no fix)",
        """
        from lightning.fabric import Fabric

        USE_FSDP = False


        def main():
            fabric = Fabric(accelerator="cuda", devices=4, strategy="fsdp" if USE_FSDP else "ddp")
            fabric.launch()
        """,
        severity=Severity.WARNING,
        path=NOTEBOOK,
    ),
]
