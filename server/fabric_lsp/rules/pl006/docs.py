"""PL006's documentation and examples (the examples are also its tests)."""

from __future__ import annotations

from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.rule import Example

SUMMARY = '`Trainer(...)` configuration Lightning rejects when the Trainer is built: an unknown strategy or accelerator (1.x\'s `None`, `accelerator="ddp"`), invalid `devices`, `fsdp` without a GPU, a multi-process strategy in a notebook'

DOC = """
## What it does
Flags a `Trainer(...)` whose strategy, accelerator, devices, number of nodes, precision or plugins
Lightning's accelerator connector rejects in `Trainer.__init__`, before anything runs. The
configuration is worked out as for a Fabric (FAB008): one per path the code can take (defaults
nobody overrides, command-line options, values passed by the callers), each on every kind of
machine it can mean, resolved by a mirror of Lightning 2.6.6's connector
(`lightning/pytorch/trainer/connectors/accelerator_connector.py`) that the tests hold to the real
one. Among what it rejects:

- a strategy or accelerator name it does not know: 1.x spellings (`strategy=None`,
  `accelerator=None`, 1.x's defaults; `accelerator="ddp"`, a strategy given as the accelerator,
  which 1.6 and earlier took; `strategy="dp"`, removed in 2.0) and misspellings;
- `devices=0`, `devices=None` or a malformed device list;
- `strategy="fsdp"` with `accelerator="cpu"`, a DDP-family strategy on the MPS accelerator, the XLA
  accelerator with a non-XLA strategy, conflicting plugins;
- in a notebook, a strategy whose launcher starts the script again (`ddp`, `fsdp`, `deepspeed`,
  …: Lightning raises `MisconfigurationException` in an interactive environment; `ddp_notebook`
  and `ddp_fork` are made for it).

It is an **error** where every configuration the code can run is rejected on every machine it can
mean, and a **warning** where one configuration the code visibly can choose is (a command-line
option's default, one branch) while others are not, or some are not known. A check that depends on
the machine itself (devices present, `torch_xla` installed, the platform's start methods) is not
judged, nor a configuration the connector accepts on one kind of machine it can mean
(`accelerator="gpu"` fails only where there is none), nor a strategy or accelerator name where the
project may register names (it mentions `StrategyRegistry`, `AcceleratorRegistry` or a package
that registers its own, such as `lightning_habana`). Nothing is reported inside a `try` or a
`pytest.raises(...)` that expects the exception, nor where the analysed Lightning is older than
2.0 (1.x took other names and defaults).

## Why is this bad?
The script dies before training at the line that builds the `Trainer`, on the cluster or in the
scheduler's queue; 1.x code run on a current install (`accelerator="ddp"`, `strategy=None`) meets
it first.

## Lightning's message
- `ValueError: You selected an invalid strategy name: strategy=None. It must be either a string
  or an instance of lightning.pytorch.strategies.Strategy.` (`accelerator_connector.py:192`)
- `ValueError: You selected an invalid accelerator name: accelerator='ddp'. Available names are:
  auto, cpu, cuda, mps, tpu.` (`accelerator_connector.py:204`)
- `MisconfigurationException: Trainer(devices=0) value is not a valid input using cpu
  accelerator.` (`accelerator_connector.py:325`)
- `MisconfigurationException: Trainer(strategy='ddp') is not compatible with an interactive
  environment.` (`accelerator_connector.py:535`)

## Example
```python
trainer = L.Trainer(accelerator="ddp", gpus=2)
```

## Use instead
```python
trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp")
```

## Fix safety
No automatic fix: which strategy, accelerator or device count the run should use is the author's
choice. The message says how 2.x spells a 1.x value.

## Which strategies
All: the connector checks the configuration before any strategy is set up.
"""

VALID = [
    Example(
        "a configuration Lightning takes",
        """
import lightning as L

trainer = L.Trainer(accelerator="cpu", devices=2, strategy="ddp", precision="bf16-mixed")
""",
    ),
    Example(
        "accelerator='gpu': fails only on a machine without one, which the code does not mean",
        """
import lightning as L

trainer = L.Trainer(accelerator="gpu", devices=1)
""",
    ),
    Example(
        "an option with no default: what the user passes",
        """
import argparse
import lightning as L

parser = argparse.ArgumentParser()
parser.add_argument("--strategy")
args = parser.parse_args()
trainer = L.Trainer(strategy=args.strategy)
""",
    ),
    Example(
        "a test that expects the failure",
        """
import pytest
import lightning as L

def test_invalid_accelerator():
    with pytest.raises(ValueError, match="invalid accelerator"):
        L.Trainer(accelerator="ddp")
""",
    ),
    Example(
        "a strategy name the project registers",
        """
import lightning as L
from lightning.pytorch.strategies import DDPStrategy, StrategyRegistry

StrategyRegistry.register("ddp_quiet", DDPStrategy, description="DDP", find_unused_parameters=False)
trainer = L.Trainer(strategy="ddp_quiet", accelerator="cpu", devices=2)
""",
    ),
    Example(
        "the fork-based DDP strategy in a notebook",
        """
import lightning as L

trainer = L.Trainer(accelerator="cpu", devices=2, strategy="ddp_notebook")
""",
        path="example.ipynb",
    ),
]

INVALID = [
    Example(
        "1.x's strategy given as the accelerator",
        """
import lightning as L

trainer = L.Trainer(accelerator="ddp", devices=2)
""",
        severity=Severity.ERROR,
    ),
    Example(
        "1.x's default strategy=None",
        """
from pytorch_lightning import Trainer

trainer = Trainer(max_epochs=10, strategy=None)
""",
        severity=Severity.ERROR,
    ),
    Example(
        "devices=0",
        """
import lightning as L

trainer = L.Trainer(accelerator="cpu", devices=0)
""",
        severity=Severity.ERROR,
    ),
    Example(
        "a multi-process strategy in a notebook",
        """
import lightning as L

trainer = L.Trainer(accelerator="cpu", devices=2, strategy="ddp")
""",
        path="example.ipynb",
        severity=Severity.ERROR,
    ),
    Example(
        "a command-line option whose default is rejected",
        """
import argparse
import lightning as L

parser = argparse.ArgumentParser()
parser.add_argument("--accelerator", default="dp")
args = parser.parse_args()
trainer = L.Trainer(accelerator=args.accelerator)
""",
        severity=Severity.WARNING,
    ),
]
