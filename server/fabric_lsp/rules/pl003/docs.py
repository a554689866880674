"""PL003's documentation and examples (the examples are also its tests)."""

from __future__ import annotations

from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.rule import Example

SUMMARY = "A LightningModule that optimises in a way `trainer.fit` refuses: `optimizer_idx` in `training_step`, several optimizers under automatic optimisation or DeepSpeed, clipping by value under DeepSpeed, automatic clipping or accumulation under manual optimisation"

DOC = """
## What it does
Flags the LightningModules whose optimisation `trainer.fit` refuses before the first step:

- a `training_step` that takes an `optimizer_idx` parameter (Lightning 1.x passed it; 2.x
  refuses the signature, under manual optimisation as well);
- a `configure_optimizers` that returns several optimizers (a list or tuple of them, the
  `([optimizers], [schedulers])` pair, a list of `{"optimizer": ...}` dicts) while the module
  keeps automatic optimisation (`automatic_optimization` not set to `False` anywhere in the
  class or its user bases).

And the `trainer.fit(model)` calls whose Trainer refuses how the model optimises:

- a module that sets `self.automatic_optimization = False`, fit by a Trainer with
  `gradient_clip_val` greater than 0 (`None` and `0` do not clip) or with
  `accumulate_grad_batches` other than 1 (any value that is not equal to 1: `None`, `2.0`, `"2"`
  too — `Trainer.__init__` stores it unchecked and the check is `!= 1`; under automatic
  optimisation `None` fails only at the first training batch, and is not reported);
- a Trainer that clips by value (`gradient_clip_algorithm="value"`, in any case: the Trainer
  lowers it), fit with a DeepSpeed strategy (any config): DeepSpeed's setup refuses it before it
  calls `configure_optimizers`, under either optimisation;
- a `configure_optimizers` that gives several optimizers or several learning-rate schedulers,
  fit by a DeepSpeed Trainer: `strategy="deepspeed"` and the other DeepSpeed names of the
  Trainer's registry (`"deepspeed_stage_1"` … `"deepspeed_stage_3_offload_nvme"`), a
  `DeepSpeedStrategy(...)` or a subclass of it. (Several optimizers under automatic optimisation
  fail before, and are reported at `configure_optimizers`.)

The Trainer is followed from the call's receiver to its `Trainer(...)` (through assignments,
factories, other modules); each path through its arguments counts. The call is an **error** where
every Trainer it may run on and every model it may fit fail (a literal argument on every path), a
**warning** where some do (a flag that chooses `gradient_clip_val`, `gradient_clip_algorithm` or the
strategy). Nothing where
an argument is not known on any path (a value from the command line, `**config`, a Trainer from
another package's factory), where it is not given (`gradient_clip_val=None`,
`accumulate_grad_batches=1` and `strategy="auto"` are the defaults: `"auto"` never picks DeepSpeed),
or where the DeepSpeed config may name an `"optimizer"` (`DeepSpeedStrategy(config=...)` other than
a literal dict without one: then Lightning never calls `configure_optimizers`). A
`PL_DEEPSPEED_CONFIG_PATH` variable holding such a config is not seen.

At the module, it is an **error** where a `trainer.fit(model)` call certainly runs the class (the model followed
through assignments, factories and other modules) and every `return` of `configure_optimizers`
gives several optimizers; a **warning** where `fit` may run it (on some paths, or no entry point
of the class is seen at all: a LightningModule is written to be fit; a `LightningCLI(Model)`, whose
command line picks the subcommand), or only some `return`s give
several optimizers. Nothing where the entry points seen on the class are only
`validate`/`test`/`predict` (they never call `configure_optimizers`), where none is seen and the
class derives from the other import style's `LightningModule` (`pytorch_lightning` vs `lightning`)
than every Trainer the workspace's entry points run (they refuse it with a `TypeError` first,
`utilities/model_helpers.py:96`: a vendored copy of 1.x code), where none is seen and what
every entry point of the workspace runs is known, at least one model by the type it is declared
with (`system: BaseSystem = registry[name](...)`, a parameter `model: BaseSystem`; the others
built from a class), and none of them may be an instance of the class (it is neither a declared
class nor a base or subclass of one: a vendored model used as a frozen part of another; a notebook
that calls an entry point, a `LightningCLI` or a model not known keeps the warning), where the number of
optimizers or `automatic_optimization` is not known, or where the analysed environment's
Lightning is older than 2.0 (1.x optimised several optimizers itself). The Trainer's checks:
the manual-optimisation ones exist since 1.4.0 (`trainer/configuration_validator.py` there too);
DeepSpeed's are reported from 2.0 (1.x raised the optimizers one as well, under automatic
optimisation too); `accumulate_grad_batches` other than an int, from 2.0 (1.x took `None`, its
default, as 1). Clipping by value under DeepSpeed also fails `trainer.validate`/`test`/`predict`
(the strategy's setup runs `init_deepspeed` for them, `strategies/deepspeed.py:373`): those calls
are checked for it alone (the other checks run in `fit` only).

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
- clipping under manual optimisation — `MisconfigurationException: Automatic gradient clipping is
  not supported for manual optimization. Remove `Trainer(gradient_clip_val=1.0)` or switch to
  automatic optimization.` (`lightning/pytorch/trainer/configuration_validator.py:122-127`)
- accumulation under manual optimisation — `MisconfigurationException: Automatic gradient
  accumulation is not supported for manual optimization. Remove `Trainer(accumulate_grad_batches=4)`
  or switch to automatic optimization.` (`lightning/pytorch/trainer/configuration_validator.py:128-133`)
- DeepSpeed — `MisconfigurationException: DeepSpeed currently only supports single optimizer,
  single optional scheduler.` (`lightning/pytorch/strategies/deepspeed.py:482-485`)
- DeepSpeed, clipping by value — `MisconfigurationException: DeepSpeed does not support clipping
  gradients by value.` (`lightning/pytorch/strategies/deepspeed.py:470-471`)

## Example
```python
class GAN(L.LightningModule):
    def training_step(self, batch, batch_idx, optimizer_idx):
        ...

    def configure_optimizers(self):
        return [Adam(self.generator.parameters()), Adam(self.discriminator.parameters())]



class ManualGAN(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
    ...


L.Trainer(gradient_clip_val=1.0).fit(ManualGAN())  # the Trainer clips under automatic optimisation only
L.Trainer(strategy="deepspeed").fit(ManualGAN())  # if ManualGAN returns two optimizers
L.Trainer(strategy="deepspeed", gradient_clip_algorithm="value").fit(GAN())  # DeepSpeed clips by norm only
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


    # clip in `training_step`: `self.clip_gradients(g_opt, gradient_clip_val=1.0)`


L.Trainer().fit(GAN())
```

## Fix safety
No automatic fix: moving to manual optimisation means writing the steps (`manual_backward`,
`step`, `zero_grad` for each optimizer), which only the author can do; under manual optimisation,
clipping and accumulation move into `training_step` (`self.clip_gradients`, stepping every N
batches), DeepSpeed needs one optimizer (or another strategy) and clips by norm only
(`gradient_clip_algorithm="norm"`).

## Which strategies
The module's checks: every strategy and configuration (`fit` makes them on every Trainer). The
clipping and accumulation checks: every strategy. Several optimizers or schedulers, clipping by
value: DeepSpeed.
"""

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
        "manual optimisation fit by a Trainer that does not clip (gradient_clip_val=0)",
        _module(
            """
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()

    def configure_optimizers(self):
        return Adam(self.parameters())
""",
            "\nL.Trainer(gradient_clip_val=0, accumulate_grad_batches=1).fit(GAN())\n",
        ),
    ),
    Example(
        "DeepSpeed clipping by norm",
        _module(
            """
    def training_step(self, batch, batch_idx):
        return self(batch).sum()

    def configure_optimizers(self):
        return Adam(self.parameters())
""",
            '\nL.Trainer(strategy="deepspeed", gradient_clip_val=1.0, gradient_clip_algorithm="norm").fit(GAN())\n',
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
        "manual optimisation fit by a Trainer that clips",
        _module(
            """
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()

    def configure_optimizers(self):
        return Adam(self.parameters())
""",
            "\ntrainer = L.Trainer(max_epochs=1, gradient_clip_val=1.0)\ntrainer.fit(GAN())\n",
        ),
        severity=Severity.ERROR,
    ),
    Example(
        "manual optimisation, a Trainer that clips when a flag is set",
        _module(
            """
    automatic_optimization = False

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()

    def configure_optimizers(self):
        return Adam(self.parameters())
""",
            "\nL.Trainer(gradient_clip_val=0.5 if args.clip else None).fit(GAN())\n",
        ),
        severity=Severity.WARNING,
    ),
    Example(
        "two optimizers under DeepSpeed (manual optimisation)",
        _module(
            """
    automatic_optimization = False

    def training_step(self, batch, batch_idx):
        g_opt, d_opt = self.optimizers()

    def configure_optimizers(self):
        return [Adam(self.g.parameters()), Adam(self.d.parameters())]
""",
            '\nL.Trainer(strategy="deepspeed_stage_2").fit(GAN())\n',
        ),
        severity=Severity.ERROR,
    ),
    Example(
        "DeepSpeed clipping by value",
        _module(
            """
    def training_step(self, batch, batch_idx):
        return self(batch).sum()

    def configure_optimizers(self):
        return Adam(self.parameters())
""",
            '\nL.Trainer(strategy="deepspeed", gradient_clip_val=1.0, gradient_clip_algorithm="value").fit(GAN())\n',
        ),
        severity=Severity.ERROR,
    ),
    Example(
        "manual optimisation, accumulate_grad_batches=None (2.x compares it with 1)",
        _module(
            """
    automatic_optimization = False

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()

    def configure_optimizers(self):
        return Adam(self.parameters())
""",
            "\nL.Trainer(accumulate_grad_batches=None).fit(GAN())\n",
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
