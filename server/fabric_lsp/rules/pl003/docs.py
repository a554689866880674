"""PL003's documentation and examples (the examples are also its tests)."""

from __future__ import annotations

from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.rule import Example

SUMMARY = "A LightningModule that optimises in a way `trainer.fit` refuses: `optimizer_idx` in `training_step`, several optimizers under automatic optimisation"

DOC = '''
## What it does
Flags the LightningModules whose optimisation `trainer.fit` refuses before the first step:

- a `training_step` that takes an `optimizer_idx` parameter (Lightning 1.x passed it; 2.x
  refuses the signature, under manual optimisation as well);
- a `configure_optimizers` that returns several optimizers (a list or tuple of them, the
  `([optimizers], [schedulers])` pair, a list of `{"optimizer": ...}` dicts) while the module
  keeps automatic optimisation (`automatic_optimization` not set to `False` anywhere in the
  class or its user bases).

It is an **error** where a `trainer.fit(model)` call certainly runs the class (the model followed
through assignments, factories and other modules) and every `return` of `configure_optimizers`
gives several optimizers; a **warning** where `fit` may run it (on some paths, or no entry point
of the class is seen at all: a LightningModule is written to be fit), or only some `return`s give
several optimizers. Nothing where the entry points seen on the class are only
`validate`/`test`/`predict` (they never call `configure_optimizers`), where the number of
optimizers or `automatic_optimization` is not known, or where the analysed environment's
Lightning is older than 2.0 (1.x optimised several optimizers itself).

## Why is this bad?
The run fails at the start of `fit`, after the data, the model and the processes are set up —
on a cluster, after the job waited in the queue. Lightning 2.0 removed automatic optimisation of
several optimizers (the GAN pattern of 1.x: `training_step(self, batch, batch_idx,
optimizer_idx)`).

## Lightning's message
- `optimizer_idx` — `RuntimeError: Training with multiple optimizers is only supported with
  manual optimization. Remove the `optimizer_idx` argument from `training_step`, set
  `self.automatic_optimization = False` and access your optimizers in `training_step` with
  `opt1, opt2, ... = self.optimizers()`.` (`lightning/pytorch/core/optimizer.py:352-357`)
- several optimizers — `RuntimeError: Training with multiple optimizers is only supported with
  manual optimization. Set `self.automatic_optimization = False`, then access your optimizers in
  `training_step` with `opt1, opt2, ... = self.optimizers()`.`
  (`lightning/pytorch/core/optimizer.py:358-363`)

## Example
```python
class GAN(L.LightningModule):
    def training_step(self, batch, batch_idx, optimizer_idx):
        ...

    def configure_optimizers(self):
        return [Adam(self.generator.parameters()), Adam(self.discriminator.parameters())]
```

## Use instead
```python
class GAN(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False

    def training_step(self, batch, batch_idx):
        g_opt, d_opt = self.optimizers()
        ...

    def configure_optimizers(self):
        return [Adam(self.generator.parameters()), Adam(self.discriminator.parameters())]
```

## Fix safety
No automatic fix: moving to manual optimisation means writing the steps (`manual_backward`,
`step`, `zero_grad` for each optimizer), which only the author can do.

## Which strategies
Every strategy and configuration: the checks are the module's, made by `fit` on every Trainer.
'''

_MODULE = """
import lightning as L
import torch
from torch.optim import Adam

class GAN(L.LightningModule):
{body}
"""


def _module(body: str, tail: str = "") -> str:
    return _MODULE.format(body=body) + tail


VALID = [
    Example(
        "manual optimisation with two optimizers",
        _module(
            """
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False

    def training_step(self, batch, batch_idx):
        g_opt, d_opt = self.optimizers()

    def configure_optimizers(self):
        return [Adam(self.g.parameters()), Adam(self.d.parameters())]
""",
            "\nL.Trainer().fit(GAN())\n",
        ),
    ),
    Example(
        "one optimizer and its scheduler",
        _module(
            """
    def training_step(self, batch, batch_idx):
        return self(batch).sum()

    def configure_optimizers(self):
        opt = Adam(self.parameters())
        return [opt], [torch.optim.lr_scheduler.StepLR(opt, 1)]
""",
            "\nL.Trainer().fit(GAN())\n",
        ),
    ),
    Example(
        "a class that is only tested never calls configure_optimizers",
        _module(
            """
    def training_step(self, batch, batch_idx, optimizer_idx):
        return self(batch).sum()
""",
            "\nL.Trainer().test(GAN())\n",
        ),
    ),
    Example(
        "automatic_optimization as a class attribute",
        _module(
            """
    automatic_optimization = False

    def configure_optimizers(self):
        return Adam(self.g.parameters()), Adam(self.d.parameters())
"""
        ),
    ),
]

INVALID = [
    Example(
        "optimizer_idx in training_step, the class fit",
        _module(
            """
    def training_step(self, batch, batch_idx, optimizer_idx):
        return self(batch).sum()
""",
            "\nmodel = GAN()\ntrainer = L.Trainer(max_epochs=1)\ntrainer.fit(model)\n",
        ),
        severity=Severity.ERROR,
    ),
    Example(
        "two optimizers under automatic optimisation, the class fit",
        _module(
            """
    def training_step(self, batch, batch_idx):
        return self(batch).sum()

    def configure_optimizers(self):
        return [Adam(self.g.parameters()), Adam(self.d.parameters())]
""",
            "\nL.Trainer().fit(GAN())\n",
        ),
        severity=Severity.ERROR,
    ),
    Example(
        "the 1.x pair of lists, no fit seen",
        _module(
            """
    def configure_optimizers(self):
        g = Adam(self.g.parameters())
        d = Adam(self.d.parameters())
        return [g, d], []
"""
        ),
        severity=Severity.WARNING,
    ),
]
