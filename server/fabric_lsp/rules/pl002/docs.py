"""PL002's documentation and examples (the examples are also its tests)."""

from __future__ import annotations

from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.rule import Example

SUMMARY = "`ModelCheckpoint`/`EarlyStopping`/`ReduceLROnPlateau` monitors a key the fitted LightningModule never logs"

DOC = """
## What it does
Flags a `trainer.fit(model, ...)` whose Trainer has a `ModelCheckpoint(monitor=K)` or an
`EarlyStopping(monitor=K)` in `callbacks=`, or whose LightningModule's `configure_optimizers`
returns a `ReduceLROnPlateau` scheduler with `"monitor": K`, where no key the module logs
(`self.log`/`self.log_dict` in its hooks and the methods they call) can give `K`, under
Lightning's own key rules:

- a key logged with both `on_step` and `on_epoch` also gives `K_step` and `K_epoch`
  (`result.py:154-159`), each hook with its default levels (`training_step` logs per step,
  `validation_step` per epoch);
- an evaluation hook (`validation_step`, `on_validation_epoch_end`, …) never gives a `_step`
  name, nor a key logged with `on_epoch=False` (`result.py:485-487`);
- `K/dataloader_idx_N` is the key of an evaluation hook with several dataloaders;
- `"epoch"` and `"step"` are always valid for `ModelCheckpoint` (`model_checkpoint.py:896-904`),
  not for `EarlyStopping`.

It is an **error** where the check is certainly reached and fails: `EarlyStopping` (`strict=True`,
the default) at the end of the first training epoch (with `check_on_train_epoch_end=False`, or
validation not every epoch, at the end of the first validation: without a validation loop it never
checks); `ModelCheckpoint` (`save_top_k` ≠ 0, saving every epoch: with `every_n_epochs` > 1,
`every_n_train_steps` or `train_time_interval` it checks only once that much has passed, which
`fit` may never reach, and is not judged) once a
validation loop has run — the module has a `validation_step` and `fit` certainly gets validation
data (`val_dataloaders`, a datamodule's or the module's `val_dataloader`); `ReduceLROnPlateau`
(epoch interval, `strict` true) at the end of the first epoch under automatic optimisation. It is a
**warning** where that depends on a path or a setting (a `monitor` chosen by a flag, `fast_dev_run`
on some paths, a limit such as `max_steps` or `limit_val_batches` that may end `fit` or skip
validation first, validation data not certainly given). Nothing is reported where a key may be
logged that this analysis cannot read: a key it cannot compute (an f-string's known ends still
count: `f"val_{name}"` may be `val_acc`), `self` handed to other code, a base class it does not
read, a project's subclass of `ModelCheckpoint`/`EarlyStopping` that defines methods of its own (its hooks may check elsewhere, or never), a project's callback that may log through the LightningModule (`pl_module.log`; a logger's `experiment.log` does not count), code writing `callback_metrics`, a `configure_callbacks`
that replaces the Trainer's callbacks, a model whose class is not known, a Trainer not known statically (built by `LightningCLI`, from a config: a hint with `report-unknown`); nor under
`fast_dev_run` (neither callback checks then), nor where a fitted module has no `training_step`
(`fit` raises first, `configuration_validator.py:52`), nor where the analysed Lightning is older than 1.2.
From 1.4 to 1.9 the monitors see what `self.log` logged, as in 2.x, and a 1.x module's `*_epoch_end` and
`*_step_end` hooks count as places it logs. In 1.2 and 1.3 only `EarlyStopping` is judged: it checks at
the end of each validation (1.3: unless `check_on_train_epoch_end=True`), and a logged name may give
its `_step`/`_epoch` forms at any level; in 1.2 nothing is reported for a module that mentions a
`"log"`/`"progress_bar"` key or a `Result` (a dict a hook returned with those keys fed the monitors
until 1.3.0 removed `process_dict_result`). A key computed in a loop over a literal list or the
literal keys of a dict (`for k, v in self.metrics(batch).items(): self.log("val_" + k, v)`) is
each of those keys.

A `LightningCLI(Model, trainer_defaults={"callbacks": [...]})` is checked too: the callbacks of
`trainer_defaults` are always its Trainer's and `configure_optimizers` is `Model`'s, so their
monitors are compared with what `Model` logs — a **warning** at most, since its command line picks
the subcommand and may set any other Trainer argument (a limit, `fast_dev_run`).

## Why is this bad?
The run fails after its first epoch — or, for `ModelCheckpoint`, after its first validation —
often hours into a job, for a typo or a renamed metric; with `strict=False` it silently never
stops early or never keeps the best checkpoint.

## Lightning's message
- `MisconfigurationException: `ModelCheckpoint(monitor='val_acc')` could not find the monitored key
  in the returned metrics: ['val_loss', 'epoch', 'step']. HINT: Did you call `log('val_acc', value)`
  in the `LightningModule`?` (`lightning/pytorch/callbacks/model_checkpoint.py:579-587`)
- `RuntimeError: Early stopping conditioned on metric `val_loss_step` which is not available. Pass
  in or modify your `EarlyStopping` callback to use any of the following: `val_loss`, `val_loss_epoch``
  (`callbacks/early_stopping.py:164-175`)
- `MisconfigurationException: ReduceLROnPlateau conditioned on metric val_acc which is not
  available. Available metrics are: ['val_loss']. …` (`loops/training_epoch_loop.py:487-499`)

## Example
```python
class Model(L.LightningModule):
    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self.loss(batch))

trainer = L.Trainer(callbacks=[ModelCheckpoint(monitor="val_acc")])
trainer.fit(Model(), train_loader, val_loader)
```

## Use instead
```python
trainer = L.Trainer(callbacks=[ModelCheckpoint(monitor="val_loss")])
```
The message names the keys the module logs and the closest one.

## Fix safety
No automatic fix: which metric to monitor (or what to log) is the author's choice; the closest
logged key is offered in the message only.

## Which strategies
All: the monitored keys are checked the same way under every strategy, accelerator and precision.
"""

_HEAD = """
import lightning as L
import torch
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint
from torch.utils.data import DataLoader

train_loader = DataLoader(torch.randn(8, 4))
val_loader = DataLoader(torch.randn(8, 4))


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        loss = self.layer(batch).sum()
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self.layer(batch).sum())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

"""

INVALID = [
    Example(
        "`ModelCheckpoint` monitors a key nobody logs",
        _HEAD
        + """
trainer = L.Trainer(max_epochs=2, callbacks=[ModelCheckpoint(monitor="val_acc")])
trainer.fit(Model(), train_loader, val_loader)
""",
        Severity.ERROR,
    ),
    Example(
        "`EarlyStopping` on a `_step` name of a validation key (never in the callback metrics)",
        _HEAD
        + """
trainer = L.Trainer(callbacks=[EarlyStopping(monitor="val_loss_step")])
trainer.fit(Model(), train_loader, val_loader)
""",
        Severity.ERROR,
    ),
    Example(
        "a monitor chosen by a flag: one choice is never logged",
        _HEAD
        + """
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--on-train", action="store_true")
args = parser.parse_args()
monitor = "train_loss" if args.on_train else "val_acc"
trainer = L.Trainer(callbacks=[EarlyStopping(monitor=monitor)])
trainer.fit(Model(), train_loader, val_loader)
""",
        Severity.WARNING,
    ),
]

VALID = [
    Example(
        "the monitored keys are logged (`train_loss_epoch` is not: `on_epoch` is off in `training_step`)",
        _HEAD
        + """
trainer = L.Trainer(callbacks=[ModelCheckpoint(monitor="val_loss"), EarlyStopping(monitor="train_loss")])
trainer.fit(Model(), train_loader, val_loader)
""",
    ),
    Example(
        '`"epoch"` is always a `ModelCheckpoint` candidate',
        _HEAD
        + """
trainer = L.Trainer(callbacks=[ModelCheckpoint(monitor="epoch", mode="max")])
trainer.fit(Model(), train_loader, val_loader)
""",
    ),
    Example(
        "a key built at run time may be the monitored one",
        """
import lightning as L
from lightning.pytorch.callbacks import EarlyStopping


class Model(L.LightningModule):
    def validation_step(self, batch, batch_idx):
        for name, value in self.metrics(batch).items():
            self.log(f"val_{name}", value)


trainer = L.Trainer(callbacks=[EarlyStopping(monitor="val_acc")])
trainer.fit(Model())
""",
    ),
    Example(
        "`fast_dev_run`: neither callback checks its monitor",
        _HEAD
        + """
trainer = L.Trainer(fast_dev_run=True, callbacks=[EarlyStopping(monitor="val_acc")])
trainer.fit(Model(), train_loader, val_loader)
""",
    ),
]
