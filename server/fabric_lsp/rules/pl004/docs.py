"""PL004's documentation and examples (the examples are also its tests)."""

from __future__ import annotations

from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.rule import Example

SUMMARY = "Lightning 1.x API that Lightning 2.x removed: epoch-end hooks, removed `Trainer` flags and argparse classmethods, `load_from_checkpoint` on an instance, `self.hparams = ...`"

DOC = """
## What it does
Flags the Lightning 1.x API that the Trainer of Lightning 2.x rejects at run time:

- a LightningModule that defines `training_epoch_end`, `validation_epoch_end` or
  `test_epoch_end` (removed in 2.0.0). `trainer.fit` refuses the first two, `trainer.validate`
  the second, `trainer.test` the third; `trainer.predict` none. An **error** where an entry point
  that refuses the hook certainly runs the class (`trainer.fit(model)` with `model` an instance of
  it, followed through assignments, factories and other modules); a **warning** where it runs
  it on some paths only, or where no `fit`/`validate`/`test` call on the class is seen (the
  message says which entry points refuse it); nothing where the calls seen on the class never
  check the hook (a `test_epoch_end` on a class that is only ever `fit`), or where no call is seen
  and the class derives from the other import style's `LightningModule` (`pytorch_lightning` vs
  `lightning`) than every Trainer the workspace's entry points run — those Trainers refuse it with a
  `TypeError` first (`utilities/model_helpers.py:96`): 1.x code vendored into a 2.x project —, or
  where no call is seen and every entry point of the workspace runs a known model, at least one
  of them known by the type it is declared with (`system: BaseSystem = registry[name](...)`),
  none of which may be an instance of the class. A `LightningCLI(Model)`
  runs the class with the subcommand its command line names, so each of `fit`/`validate`/`test`
  is a run on some paths (a **warning**), unless the code writes it (`args=["fit", ...]`) or
  says `run=False` (then `cli.trainer.fit(cli.model)` is the entry point); with
  `subclass_mode_model=True` it may run any subclass of the class it is given. The body of
  `if __name__ == "__main__":` is what runs when the script is run;
- a `Trainer(...)` keyword that `Trainer.__init__` does not take — it is keyword-only and has no
  `**kwargs`, so `gpus=`, `tpu_cores=`, `resume_from_checkpoint=`, `progress_bar_refresh_rate=`,
  `weights_summary=` and the other 1.x flags are a `TypeError`; the message names the release that
  removed each one (most in 2.0.0; `progress_bar_refresh_rate=`, `weights_summary=`,
  `checkpoint_callback=` and six others in 1.7.0, `weights_save_path=` in 1.8.0,
  `reload_dataloaders_every_epoch=` in 1.6.0, `distributed_backend=` and
  `truncated_bptt_steps=` in 1.5.0) and what replaced it; a keyword spelt close to a parameter or
  a removed flag gets a suggestion (`max_epoch=`: "did you mean `max_epochs`?"), never a fix. An **error** for a removed flag (a **warning** for any other keyword the
  2.6 signature lacks: a later release may take it; none where the Trainer source the code runs —
  the project's own Lightning tree, as in Lightning's repository, or the analysed environment's
  install — takes it), only where the callee is certainly Lightning's `Trainer` (any import
  path: `lightning`, `lightning.pytorch`, `pytorch_lightning`) or a subclass whose `__init__`
  passes its `**kwargs` on to `super().__init__`, called by a name that says so (`Trainer`,
  `pl.Trainer`, `MyTrainer`; an alias such as `import Trainer as T` is not looked at);
- `Trainer.add_argparse_args(parser)`, `Trainer.from_argparse_args(args)` and the other argparse
  classmethods 2.0 removed (`parse_argparser`, `default_attributes`, `match_env_arguments`): an
  **error**, an `AttributeError` wherever the call runs, on Lightning's `Trainer` or a subclass that
  does not define the method itself (nothing on a receiver that may be something else);
- `model.load_from_checkpoint(...)` on an instance of a LightningModule or LightningDataModule
  (a `TypeError` since 2.1.0): an **error** where the receiver is certainly an instance, a
  **warning** where it may be. A receiver that is a parameter of the enclosing function is
  followed to the function's call sites (in the workspace): an **error** where every caller passes
  an instance, a **warning** where some do (another passes the class, or a value not known);
  nothing where the callers pass the class, or where the function is not called in view (only
  passed around, decorated, or not called at all);
- `self.hparams = ...` in a LightningModule or LightningDataModule: an **error** (`hparams` is a
  read-only property).

Nothing is reported where the failing statement is in a `try` whose handler catches the error
(`TypeError`, `AttributeError`, `Exception` or a bare `except`): a compatibility shim for 1.x and
2.x expects it, and so does a test's `with pytest.raises(TypeError):` (or `self.assertRaises`).

Where the analysed Lightning is older — the `lightning-version` setting, else the version installed
in the analysed environment, else the newest release the project's requirements allow
(`requirements*.txt`, `pyproject.toml`, `setup.py`/`setup.cfg`, a conda environment file: a
project pinning `pytorch-lightning==1.9.5` is judged as 1.9.5) —
only what that version rejects is reported: nothing before 2.0 for the hooks and the argparse
classmethods, the flags removed by
that release for the `Trainer(...)` keywords (a 1.8 project's `progress_bar_refresh_rate=` is a
`TypeError` there; its `gpus=` is not), nothing before 2.1 for `load_from_checkpoint`.

## Why is this bad?
These are the most common failures of code written for Lightning 1.x (tutorials, papers'
repositories) run with Lightning 2.x. The epoch-end hooks fail when `fit` starts, after the job
has queued; `load_from_checkpoint` on an instance fails after training, when the best model is
reloaded for testing.

## Lightning's message
- `NotImplementedError: Support for `validation_epoch_end` has been removed in v2.0.0. `Model`
  implements this method. You can use the `on_validation_epoch_end` hook instead.`
  (`lightning/pytorch/trainer/configuration_validator.py:76-89`, `:108-116`)
- `TypeError: Trainer.__init__() got an unexpected keyword argument 'gpus'`
  (`lightning/pytorch/trainer/trainer.py:91`)
- `TypeError: The classmethod `Model.load_from_checkpoint` cannot be called on an instance.`
  (`lightning/pytorch/utilities/model_helpers.py:126`)
- `AttributeError: property 'hparams' of 'Model' object has no setter`
  (`lightning/pytorch/core/mixins/hparams_mixin.py:166-167`)

## Example
```python
import lightning as L

class Model(L.LightningModule):
    def validation_epoch_end(self, outputs):
        self.log("val_loss", sum(outputs) / len(outputs))

trainer = L.Trainer(gpus=2)
trainer.fit(Model())
```

## Use instead
```python
import lightning as L

class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.val_losses = []

    def on_validation_epoch_end(self):
        self.log("val_loss", sum(self.val_losses) / len(self.val_losses))
        self.val_losses.clear()

trainer = L.Trainer(accelerator="gpu", devices=2)
trainer.fit(Model())
```

## Fix safety
Safe fixes, offered only where the rewrite means the same on every configuration:

- `gpus=N` → `accelerator="gpu", devices=N` for a literal `N` (an int, `-1`, a list of ints) and
  `gpus=0`/`gpus=None` → `accelerator="cpu"` (1.x ran those on the CPU; `devices=0` is refused by
  2.x), only where neither `accelerator=` nor `devices=` nor `**kwargs` is given;
- `model.load_from_checkpoint(p)` → `Model.load_from_checkpoint(p)` (or `type(model)` where the
  class's name is not certainly bound to it there), assigned back to `model` where the result was
  dropped — it never loaded the instance in place. No fix where the receiver is a parameter of the
  enclosing function: its callers choose it, and no rewrite in the function is right for every
  caller (`Model.` is wrong for one that passes another class's instance, `type(model).` for one
  that passes the class); the finding points at where the instances are made;
- `def validation_epoch_end(self, outputs)` → `def on_validation_epoch_end(self)`, only where
  `outputs` is not used, the new hook is not defined already and the old name is used nowhere
  else in the workspace. A hook that uses its outputs needs them collected by hand (see above):
  no fix.

## Which strategies
All: these fail whatever the strategy, accelerator or precision. What matters is the entry point:
`fit` checks `training_epoch_end` and `validation_epoch_end`, `validate` checks
`validation_epoch_end`, `test` checks `test_epoch_end`, `predict` checks none.
"""

VALID = [
    Example(
        "the 2.x hooks and flags",
        """
import lightning as L

class Model(L.LightningModule):
    def on_validation_epoch_end(self):
        pass

trainer = L.Trainer(accelerator="gpu", devices=2)
trainer.fit(Model())
""",
    ),
    Example(
        "test_epoch_end on a class that is only fit",
        """
import lightning as L

class Model(L.LightningModule):
    def test_epoch_end(self, outputs):
        pass

L.Trainer().fit(Model())
""",
    ),
    Example(
        "load_from_checkpoint on the class",
        """
import lightning as L

class Model(L.LightningModule):
    pass

model = Model.load_from_checkpoint("best.ckpt")
""",
    ),
    Example(
        "load_from_checkpoint on a class passed as an argument",
        """
import lightning as L

class Model(L.LightningModule):
    pass

def restore(cls, path):
    return cls.load_from_checkpoint(path)

restore(Model, "best.ckpt")
""",
    ),
    Example(
        "a Trainer subclass that takes its own keyword",
        """
import lightning as L

class MyTrainer(L.Trainer):
    def __init__(self, gpus=1, **kwargs):
        super().__init__(devices=gpus, **kwargs)

MyTrainer(gpus=2)
""",
    ),
    Example(
        "a `gpus=` keyword of something else",
        """
def Trainer(**kwargs):
    return kwargs

Trainer(gpus=2)
""",
    ),
    Example(
        "save_hyperparameters",
        """
import lightning as L

class Model(L.LightningModule):
    def __init__(self, lr):
        super().__init__()
        self.save_hyperparameters()
""",
    ),
    Example(
        "a Trainer subclass with its own add_argparse_args",
        """
from argparse import ArgumentParser
import lightning as L

class MyTrainer(L.Trainer):
    @classmethod
    def add_argparse_args(cls, parser):
        parser.add_argument("--max_epochs", type=int, default=10)
        return parser

parser = MyTrainer.add_argparse_args(ArgumentParser())
""",
    ),
]

INVALID = [
    Example(
        "validation_epoch_end on a class that is fit",
        """
import lightning as L

class Model(L.LightningModule):
    def validation_epoch_end(self, outputs):
        self.log("val_loss", sum(outputs))

model = Model()
L.Trainer().fit(model)
""",
        severity=Severity.ERROR,
    ),
    Example(
        "training_epoch_end whose outputs are not used",
        """
import lightning as L

class Model(L.LightningModule):
    def training_epoch_end(self, outputs):
        print("epoch done")
""",
        severity=Severity.WARNING,
        fixed="""
import lightning as L

class Model(L.LightningModule):
    def on_train_epoch_end(self):
        print("epoch done")
""",
    ),
    Example(
        "gpus= on the Trainer",
        """
from pytorch_lightning import Trainer
trainer = Trainer(gpus=2, max_epochs=10)
""",
        severity=Severity.ERROR,
        fixed="""
from pytorch_lightning import Trainer
trainer = Trainer(accelerator="gpu", devices=2, max_epochs=10)
""",
    ),
    Example(
        "resume_from_checkpoint= on the Trainer",
        """
import lightning.pytorch as pl
trainer = pl.Trainer(resume_from_checkpoint="last.ckpt")
""",
        severity=Severity.ERROR,
    ),
    Example(
        "load_from_checkpoint on an instance",
        """
import lightning as L

class Model(L.LightningModule):
    pass

model = Model()
model.load_from_checkpoint("best.ckpt")
""",
        severity=Severity.ERROR,
        fixed="""
import lightning as L

class Model(L.LightningModule):
    pass

model = Model()
model = Model.load_from_checkpoint("best.ckpt")
""",
    ),
    Example(
        "load_from_checkpoint on an instance every caller passes (no fix: the callers choose it)",
        """
import lightning as L

class Model(L.LightningModule):
    pass

def restore(model, path):
    return model.load_from_checkpoint(path)

restore(Model(), "best.ckpt")
""",
        severity=Severity.ERROR,
    ),
    Example(
        "self.hparams = ...",
        """
import lightning as L

class Model(L.LightningModule):
    def __init__(self, hparams):
        super().__init__()
        self.hparams = hparams
""",
        severity=Severity.ERROR,
    ),
    Example(
        "Trainer.add_argparse_args, removed in 2.0",
        """
from argparse import ArgumentParser
from pytorch_lightning import Trainer

parser = Trainer.add_argparse_args(ArgumentParser())
args = parser.parse_args()
""",
        severity=Severity.ERROR,
    ),
]
