"""PL005's documentation and examples (the examples are also its tests)."""

from __future__ import annotations

from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.rule import Example

SUMMARY = '`trainer.test/validate/predict(ckpt_path="best")` on a Trainer that has no best checkpoint: checkpointing off, `fast_dev_run`, `save_top_k=0`, no `fit` before'

DOC = """
## What it does
Flags `trainer.test(...)`, `trainer.validate(...)` and `trainer.predict(...)` that load the best
checkpoint (`ckpt_path="best"`, written or a value that is certainly `"best"`, or is on some path:
a command-line option whose default is `"best"`) where Lightning's `_parse_ckpt_path` raises
`ValueError` because the Trainer has no best checkpoint:

- no checkpoint callback: `Trainer(enable_checkpointing=False)` (a `ModelCheckpoint` in
  `callbacks=` as well makes `Trainer(...)` itself refuse the configuration: not reported here);
- `fast_dev_run` truthy: the `ModelCheckpoint` never saves;
- the first `ModelCheckpoint` of `callbacks=` (Lightning uses the first one) has `save_top_k=0`;
- no `fit` ran on that Trainer before: a second `Trainer` built for testing has no best model,
  even when the first one saved it — unless it is given a `ModelCheckpoint` object another
  Trainer may have fitted with: "best" reads that object's own `best_model_path`. An object built
  beside the call (`ckpt = ModelCheckpoint(...)`) counts as this Trainer's alone where it goes
  nowhere else: kept in names of the same function, list and dict displays (`Trainer(**kwargs)`),
  `.append`, read otherwise only as `ckpt.<attribute>`, not built once for a Trainer built in a
  loop, not imported by another module. Handed to a function, returned, stored on an object or
  read from another function, it may be shared, and nothing is reported.

A call with no model and no `ckpt_path` (`trainer.test(datamodule=dm)`) means `"best"` when a
model is connected, that is after a `fit` on the same Trainer: it is checked the same way after a
`fit` (without one it fails otherwise, with a `TypeError`, which this rule does not report).

The Trainer is followed to its `Trainer(...)` call (one configuration per path). It is an
**error** where every path of the receiver fails, a **warning** where some fails
(`Trainer(fast_dev_run=args.debug)` with a `store_true` option; `ckpt_path=args.ckpt_path` with
`--ckpt_path` defaulting to `"best"`, where the script run as shipped fails) — whatever the other paths do —
and nothing where no path is known to fail because something is not known (a hint with `report-unknown` for a Trainer not known statically, such as a `LightningCLI`'s): a Trainer known only by its type (a parameter annotated
`Trainer`), `callbacks=` not fully known (a list built in a loop, appended to, `**kwargs`), a
`fit` that may or may not run before (in a branch, in another function, the Trainer passed to a
function, a module's Trainer used inside a function), a `fit(ckpt_path=...)` that resumes
(the callback's state comes from the checkpoint) — on the paths where it may: with
`ckpt_path = "last" if args.resume and not args.dev else None`, the `--dev` path resumes nothing. A `fit` counts where it is a statement of the
same function that runs before the call on every path (earlier in the same block or an
enclosing one); one in the other branch of an `if` holding the call, with no loop around that
`if`, has not run — nor has one after the call — where the function makes its own Trainer each
time it runs (`trainer = L.Trainer(...)` there; `trainer = self.trainer` may be the one an
earlier call fitted). A command-line option assigned after parsing (`args.ckpt_path = ...`) is not
known; one the script may update from a file (`args.update(yaml.safe_load(f))`) keeps its default
as one alternative. Where a LightningModule of the workspace defines `configure_callbacks` (it may
add a `ModelCheckpoint` when `fit` starts), checkpointing off and `save_top_k=0` are not
reported; a LightningModule whose source is outside the workspace is assumed not to. Nothing is reported inside a test that
expects the error (`pytest.raises(ValueError)`, a `try` catching it). Where the analysed environment has a
Lightning older than 2.0 (or `lightning-version` says so), nothing is reported: 1.x chose the
checkpoint with other defaults and messages.

## Why is this bad?
The failure comes after training: the run spends its hours in `fit` and then crashes when it
evaluates, without test metrics. Debug runs (`fast_dev_run`) and evaluation scripts that build a
fresh Trainer hit it first.

## Lightning's message
- `ValueError: `.test(ckpt_path="best")` is set but `ModelCheckpoint` is not configured.`
  (`lightning/pytorch/trainer/connectors/checkpoint_connector.py:165-166`)
- `ValueError: You cannot execute `.test(ckpt_path="best")` with `fast_dev_run=True`. Please pass
  an exact checkpoint path to `.test(ckpt_path=...)`` (`checkpoint_connector.py:168-174`)
- `ValueError: `.test(ckpt_path="best")` is set but `ModelCheckpoint` is not configured to save
  the best model.` (`checkpoint_connector.py:175-177`): `save_top_k=0`, or no `fit` before.

A call without a model becomes `"best"` at `checkpoint_connector.py:142-156`.

## Example
```python
trainer = L.Trainer(enable_checkpointing=False)
trainer.fit(model, datamodule=dm)
trainer.test(model, datamodule=dm, ckpt_path="best")
```

## Use instead
```python
trainer = L.Trainer()  # the default ModelCheckpoint keeps the best (here: the latest) model
trainer.fit(model, datamodule=dm)
trainer.test(model, datamodule=dm, ckpt_path="best")
```
or, without checkpoints, test the model in memory: `trainer.test(model, datamodule=dm)`.

## Fix safety
No automatic fix. What to load instead is the author's choice: `ckpt_path="last"` loads another
checkpoint (or, where none was saved, nothing, with a warning), dropping `ckpt_path` tests the
weights in memory, and turning checkpointing on changes what the run writes to disk.

## Which strategies
All: the checkpoint is chosen before the strategy loads it, whatever the strategy, accelerator
or precision. On SLURM with an HPC checkpoint saved, a call without `ckpt_path` loads `"hpc"`
instead (`checkpoint_connector.py:121-122`).
"""

_HEAD = """
import lightning as L
from lightning.pytorch.callbacks import ModelCheckpoint
from model import Model

model = Model()
"""

VALID = [
    Example(
        "the default Trainer after fit",
        _HEAD
        + """
trainer = L.Trainer()
trainer.fit(model)
trainer.test(model, ckpt_path="best")
""",
    ),
    Example(
        "no checkpoints: test the model in memory",
        _HEAD
        + """
trainer = L.Trainer(enable_checkpointing=False)
trainer.fit(model)
trainer.test(model)
""",
    ),
    Example(
        'ckpt_path="last"',
        _HEAD
        + """
trainer = L.Trainer(fast_dev_run=True)
trainer.fit(model)
trainer.test(model, ckpt_path="last")
""",
    ),
    Example(
        "the same ModelCheckpoint object, fitted with by another Trainer",
        _HEAD
        + """
checkpoint = ModelCheckpoint(monitor="val_loss")
L.Trainer(callbacks=[checkpoint]).fit(model)
tester = L.Trainer(callbacks=[checkpoint], devices=1)
tester.test(model, ckpt_path="best")
""",
    ),
    Example(
        "an option with no default: what the user passes",
        _HEAD
        + """
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--ckpt_path")
args = parser.parse_args()
L.Trainer().test(model, ckpt_path=args.ckpt_path)
""",
    ),
    Example(
        "a Trainer known only by its type",
        """
from lightning.pytorch import Trainer

def evaluate(trainer: Trainer, model):
    return trainer.test(model, ckpt_path="best")
""",
    ),
]

INVALID = [
    Example(
        "checkpointing turned off",
        _HEAD
        + """
trainer = L.Trainer(enable_checkpointing=False)
trainer.fit(model)
trainer.test(model, ckpt_path="best")
""",
        severity=Severity.ERROR,
    ),
    Example(
        "fast_dev_run",
        _HEAD
        + """
trainer = L.Trainer(fast_dev_run=True)
trainer.fit(model)
trainer.validate(model, ckpt_path="best")
""",
        severity=Severity.ERROR,
    ),
    Example(
        "save_top_k=0",
        _HEAD
        + """
trainer = L.Trainer(callbacks=[ModelCheckpoint(save_top_k=0)])
trainer.fit(model)
trainer.predict(model, ckpt_path="best")
""",
        severity=Severity.ERROR,
    ),
    Example(
        "a second Trainer that never ran fit",
        _HEAD
        + """
L.Trainer().fit(model)
tester = L.Trainer(devices=1)
tester.test(model, ckpt_path="best")
""",
        severity=Severity.ERROR,
    ),
    Example(
        "a ModelCheckpoint built beside the testing Trainer, handed to it alone",
        _HEAD
        + """
checkpoint = ModelCheckpoint(monitor="val_loss")
tester = L.Trainer(callbacks=[checkpoint])
tester.test(model, ckpt_path="best")
""",
        severity=Severity.ERROR,
    ),
    Example(
        "fit in the other branch",
        _HEAD
        + """
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--test-only", action="store_true")
args = parser.parse_args()
trainer = L.Trainer()
if not args.test_only:
    trainer.fit(model)
else:
    trainer.test(model, ckpt_path="best")
""",
        severity=Severity.ERROR,
    ),
    Example(
        'an option whose default is "best", on a Trainer that never fits',
        _HEAD
        + """
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--ckpt_path", default="best")
args = vars(parser.parse_args())
trainer = L.Trainer()
trainer.test(model, ckpt_path=args["ckpt_path"])
""",
        severity=Severity.WARNING,
    ),
    Example(
        'no model after fit means "best"',
        _HEAD
        + """
trainer = L.Trainer(enable_checkpointing=False)
trainer.fit(model)
trainer.test()
""",
        severity=Severity.ERROR,
    ),
]
