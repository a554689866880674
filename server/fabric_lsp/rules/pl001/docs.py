"""PL001's documentation and examples (the examples are tests)."""

from __future__ import annotations

from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.rule import Example

SUMMARY = (
    "Trainer collective reached on some ranks only: `trainer.save_checkpoint`, `self.all_gather`, "
    "`self.log(..., sync_dist=True)`, `trainer.strategy.barrier/broadcast/reduce`, `trainer.log_dir` "
    "under a rank guard"
)

DOC = """
## What it does
Flags a collective of the Lightning Trainer that only some processes reach, while the Trainer
runs several processes:

- `trainer.save_checkpoint(...)` (on `self.trainer`, a Callback hook's `trainer`, a `Trainer(...)`
  variable of the script);
- `self.all_gather(...)` in a LightningModule, `pl_module.all_gather(...)` in a Callback hook
  (its third parameter);
- `self.log(..., sync_dist=True)` / `self.log_dict(..., sync_dist=True)`, and the same on a
  Callback hook's `pl_module` (not with `rank_zero_only=True`, which does not sync);
- `trainer.strategy.barrier()`, `broadcast(...)`, `reduce(...)` and the property `trainer.log_dir`
  (it broadcasts), in a LightningModule or Callback hook, or in the script after `fit` — a
  helper of the script given the Trainer (`def save(trainer): ...`) runs where it is called.

The rank guards are FAB002's, shared: `if self.trainer.is_global_zero:`, `if trainer.is_global_zero:`,
`self.global_rank == 0`, `self.local_rank == 0`, an early `return` of the other ranks, a function
decorated with `@rank_zero_only`, a helper whose every call is so guarded. A `local_rank` test
tells apart the processes of one node only (`devices=1, num_nodes=2`: every process is local rank
0, nothing to report), a `node_rank` test the nodes only.

It is an **error** when every Trainer that may run the module (the `trainer.fit(model)` calls of
the workspace, the Trainers given the Callback) runs several processes on every machine
(`devices=2, accelerator="cpu"`, `num_nodes=2`), a **warning** when one of them may
(`devices="auto"`, the default, takes the machine's GPUs; a command-line option whose default is
`devices=2`), and nothing when each runs one process
(`devices=1`) or a Trainer is not known statically (from a config file, a `LightningCLI`'s): like
FAB002 for a Fabric it cannot see. The Trainer is followed through assignments, factories and
other modules, with the configurations of each path; a script's site after `fit` is silent
where a configuration spawns its processes (only the launching process runs on).

## Why is this bad?
Every process of the group must enter a collective. `Trainer.save_checkpoint` ends in
`self.strategy.barrier("Trainer.save_checkpoint")` (`lightning/pytorch/trainer/trainer.py:1465`);
`trainer.log_dir` broadcasts the folder from rank 0 (`trainer.py:1331`);
`self.log(..., sync_dist=True)` reduces the value across the processes
(`trainer/connectors/logger_connector/result.py`; with `rank_zero_only=True` the
sync is a no-op, `result.py:92`); `all_gather`, `barrier`, `broadcast` and
`reduce` are collectives of the strategy. On rank 0 alone they wait for ranks that never join,
until the process-group timeout, or pair with the other ranks' next collective.

## Example
```python
class Model(L.LightningModule):
    def on_train_epoch_end(self):
        if self.trainer.is_global_zero:
            self.trainer.save_checkpoint("last.ckpt")
```

## Use instead
```python
class Model(L.LightningModule):
    def on_train_epoch_end(self):
        self.trainer.save_checkpoint("last.ckpt")  # the strategy writes on rank 0
```
`torch.save`, `print`, creating a folder stay under the guard: that is never flagged.

## Fix safety
No automatic fix: removing the guard changes what the other statements of the block do (a
guarded `self.log` beside a `print`), and moving a `sync_dist=True` call out of a guard changes the
logged value's meaning; the message says to call it on every rank.

## Which strategies
Every strategy that runs several processes (DDP and its variants, FSDP, DeepSpeed). Silent: one
process; a Trainer that is not visible; a site of the script before its
Trainer's first `fit`/`validate`/`test`/`predict` (the process group does not exist yet: `barrier`,
`broadcast` and `trainer.log_dir` do nothing, `strategies/ddp.py`); after it a guarded
`trainer.log_dir` or `save_checkpoint` is flagged;
`save_checkpoint` in the script under a spawning strategy or one not known statically
(`ddp_spawn`, `ddp_notebook`, `DDPStrategy(start_method="spawn")`: after `fit` only the launching
process runs the script); `sync_dist` when not distributed.
"""

_TRAINER = """
trainer = L.Trainer(accelerator="cpu", devices=2, max_epochs=1)
trainer.fit(Model())
"""

VALID = [
    Example(
        "rank_zero_only=True with sync_dist",
        """
import lightning as L

class Model(L.LightningModule):
    def training_step(self, batch, batch_idx):
        loss = self(batch).sum()
        if self.trainer.is_global_zero:
            self.log("loss", loss, sync_dist=True, rank_zero_only=True)
        return loss
"""
        + _TRAINER,
    ),
    Example(
        "save_checkpoint on every rank, a guarded print",
        """
import lightning as L

class Model(L.LightningModule):
    def on_train_epoch_end(self):
        self.trainer.save_checkpoint("last.ckpt")
        if self.global_rank == 0:
            print("saved")
"""
        + _TRAINER,
    ),
    Example(
        "a guarded torch.save",
        """
import torch
import lightning as L

class Model(L.LightningModule):
    def on_train_end(self):
        if self.trainer.is_global_zero:
            torch.save(self.state_dict(), "model.pt")
"""
        + _TRAINER,
    ),
    Example(
        "a guarded trainer.log_dir before fit",
        """
import lightning as L

trainer = L.Trainer(accelerator="cpu", devices=2)
if trainer.is_global_zero:
    print(trainer.log_dir)
trainer.fit(model)
""",
    ),
    Example(
        "a single-device Trainer",
        """
import lightning as L

class Model(L.LightningModule):
    def on_train_epoch_end(self):
        if self.trainer.is_global_zero:
            self.trainer.save_checkpoint("last.ckpt")

trainer = L.Trainer(accelerator="cpu", devices=1)
trainer.fit(Model())
""",
    ),
]

INVALID = [
    Example(
        "save_checkpoint under is_global_zero",
        """
import lightning as L

class Model(L.LightningModule):
    def on_train_epoch_end(self):
        if self.trainer.is_global_zero:
            self.trainer.save_checkpoint("last.ckpt")
"""
        + _TRAINER,
        severity=Severity.ERROR,
    ),
    Example(
        "sync_dist logging in a @rank_zero_only helper",
        """
import lightning as L
from lightning.pytorch.utilities import rank_zero_only

class Model(L.LightningModule):
    @rank_zero_only
    def _report(self, value):
        self.log("val", value, sync_dist=True)

    def validation_step(self, batch, batch_idx):
        self._report(self(batch).sum())
"""
        + _TRAINER,
        severity=Severity.ERROR,
    ),
    Example(
        "a Callback's save_checkpoint after the other ranks return, machine-sized Trainer",
        """
import lightning as L

class Saver(L.Callback):
    def on_validation_end(self, trainer, pl_module):
        if trainer.global_rank != 0:
            return
        trainer.save_checkpoint("best.ckpt")

trainer = L.Trainer(callbacks=[Saver()])
trainer.fit(model)
""",
        severity=Severity.WARNING,
    ),
]
