"""PL002 beyond its examples: Lightning's key rules, when each check is reached, what makes the
logged keys unknown (silent), and the certainty of each finding."""

from __future__ import annotations

import textwrap

import pytest
from fabric_lsp.engine.analyzer import Analyzer
from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import RULES_BY_CODE

PL002 = RULES_BY_CODE["PL002"]
HEAD = """
import argparse
import lightning as L
import torch
from lightning.pytorch.callbacks import Callback, EarlyStopping, ModelCheckpoint

train, val = object(), object()
"""
MODULE = """
class Model(L.LightningModule):
    def training_step(self, batch, batch_idx):
        self.log("train_loss", 1.0, on_step=True, on_epoch=True)
        return 1.0

    def validation_step(self, batch, batch_idx):
        self.log("val_loss", 1.0)
"""


def pl002(body: str, module: str = MODULE, version: str | None = None):
    source = HEAD + textwrap.dedent(module) + textwrap.dedent(body)
    analyzer = Analyzer(Workspace(), [PL002], lightning_version=version)
    return [f for f in analyzer.analyze(source, None) if f.code == "PL002"]


def severities(body: str, module: str = MODULE, version: str | None = None) -> list[Severity]:
    return [f.severity for f in pl002(body, module, version)]


def fit(callbacks: str, trainer_args: str = "", fit_args: str = "train, val") -> str:
    return f"trainer = L.Trainer({trainer_args}callbacks=[{callbacks}])\ntrainer.fit(Model(), {fit_args})\n"


def test_a_checkpoint_monitor_nobody_logs_quotes_lightning_and_offers_the_closest_key():
    (f,) = pl002(fit('ModelCheckpoint(monitor="val_los")'))
    assert f.severity is Severity.ERROR
    assert "could not find the monitored key" in f.message and "Did you mean `val_loss`?" in f.message
    assert f.lightning == "lightning/pytorch/callbacks/model_checkpoint.py:579-587"
    assert f.span.start.line == HEAD.count("\n") + MODULE.count("\n") and f.fix is None


def test_lightning_key_rules():
    # training_step logs on_step and on_epoch: train_loss, train_loss_step, train_loss_epoch exist
    for key in ("train_loss", "train_loss_step", "train_loss_epoch", "val_loss"):
        assert severities(fit(f'EarlyStopping(monitor="{key}")')) == [], key
    # an evaluation hook never gives a `_step` name; val_loss is not forked at all
    for key in ("val_loss_step", "val_loss_epoch", "train_acc"):
        assert severities(fit(f'EarlyStopping(monitor="{key}")')) == [Severity.ERROR], key
    assert severities(fit('EarlyStopping(monitor="val_loss/dataloader_idx_1")')) == []
    # "epoch"/"step" are ModelCheckpoint candidates, not EarlyStopping's
    assert severities(fit('ModelCheckpoint(monitor="step")')) == []
    assert severities(fit('EarlyStopping(monitor="epoch")')) == [Severity.ERROR]


def test_a_validation_key_logged_without_on_epoch_is_never_a_callback_metric():
    module = MODULE.replace('self.log("val_loss", 1.0)', 'self.log("val_loss", 1.0, on_step=True, on_epoch=False)')
    assert severities(fit('EarlyStopping(monitor="val_loss")'), module) == [Severity.ERROR]


def test_model_checkpoint_raises_only_once_a_validation_loop_ran():
    no_validation = MODULE.replace("def validation_step", "def other_step")
    assert severities(fit('ModelCheckpoint(monitor="val_acc")'), no_validation) == []  # it only warns
    # validation data not certainly given (no val loader, no datamodule seen): possible
    assert severities(fit('ModelCheckpoint(monitor="val_acc")', fit_args="train")) == [Severity.WARNING]
    datamodule = (
        MODULE
        + """
class Data(L.LightningDataModule):
    def val_dataloader(self):
        return []
"""
    )
    assert severities(fit('ModelCheckpoint(monitor="val_acc")', fit_args="datamodule=Data()"), datamodule) == [
        Severity.ERROR
    ]
    assert severities(fit('ModelCheckpoint(monitor="val_acc")', fit_args="Data()"), datamodule) == [Severity.ERROR]


def test_what_turns_a_check_off_or_makes_it_possible():
    assert severities(fit('ModelCheckpoint(monitor="val_acc", save_top_k=0)')) == []
    assert severities(fit('EarlyStopping(monitor="val_acc", strict=False)')) == []
    assert severities(fit('EarlyStopping(monitor="val_acc")', "fast_dev_run=True, ")) == []
    assert severities(fit('ModelCheckpoint(monitor="val_acc")', "fast_dev_run=2, ")) == []
    assert severities(fit('EarlyStopping(monitor="val_acc")', "max_steps=100, ")) == [Severity.WARNING]
    assert severities(fit('EarlyStopping(monitor="val_acc")', "limit_val_batches=1, max_epochs=3, ")) == [
        Severity.ERROR
    ]
    flag = "parser = argparse.ArgumentParser()\nparser.add_argument('--debug', action='store_true')\nargs = parser.parse_args()\n"
    assert severities(flag + fit('EarlyStopping(monitor="val_acc")', "fast_dev_run=args.debug, ")) == [Severity.WARNING]


@pytest.mark.parametrize("schedule", ["every_n_epochs=2", "every_n_train_steps=100", "train_time_interval=interval"])
def test_a_checkpoint_that_saves_on_another_schedule_is_not_judged(schedule):
    # it checks the monitor only once that many epochs, steps or seconds passed (model_checkpoint.py:492,513)
    assert severities(fit(f'ModelCheckpoint(monitor="val_acc", {schedule})', "max_epochs=1, ")) == []
    assert severities(fit('ModelCheckpoint(monitor="val_acc", every_n_epochs=1)', "max_epochs=1, ")) == [Severity.ERROR]


def test_keys_that_may_be_logged_keep_it_silent():
    fstring = MODULE.replace('self.log("val_loss", 1.0)', 'self.log(f"val_{self.name}", 1.0)')
    assert severities(fit('EarlyStopping(monitor="val_acc")'), fstring) == []
    handed = MODULE.replace('self.log("val_loss", 1.0)', "log_all(self)")
    assert severities(fit('EarlyStopping(monitor="val_acc")'), handed) == []
    unknown_dict = MODULE.replace('self.log("val_loss", 1.0)', "self.log_dict(self.metrics())")
    assert severities(fit('EarlyStopping(monitor="val_acc")'), unknown_dict) == []
    literal_dict = MODULE.replace('self.log("val_loss", 1.0)', 'self.log_dict({"val_loss": 1.0, "val_acc": 2.0})')
    assert severities(fit('EarlyStopping(monitor="val_acc")'), literal_dict) == []
    assert severities(fit('EarlyStopping(monitor="val_f1")'), literal_dict) == [Severity.ERROR]
    helper = (
        MODULE.replace('self.log("val_loss", 1.0)', "self._log_metrics()")
        + '\n    def _log_metrics(self):\n        self.log("val_acc", 1.0)\n'
    )
    assert severities(fit('EarlyStopping(monitor="val_acc")'), helper) == []


def test_a_base_class_this_analysis_does_not_read_keeps_it_silent():
    mixin = "from somewhere import LoggingMixin\n" + MODULE.replace(
        "(L.LightningModule)", "(L.LightningModule, LoggingMixin)"
    )
    assert severities(fit('EarlyStopping(monitor="val_acc")'), mixin) == []
    external = "from somewhere import Base\n" + MODULE.replace("(L.LightningModule)", "(Base)")
    assert severities(fit('EarlyStopping(monitor="val_acc")'), external) == []


def test_callbacks_that_log_and_writes_to_callback_metrics_keep_it_silent():
    logging_cb = (
        MODULE
        + """
class Extra(Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        pl_module.log("val_acc", 1.0)
"""
    )
    assert severities(fit('Extra(), EarlyStopping(monitor="val_acc")'), logging_cb) == []
    quiet_cb = (
        MODULE
        + """
class Quiet(Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        print(trainer.current_epoch)
"""
    )
    assert severities(fit('Quiet(), EarlyStopping(monitor="val_acc")'), quiet_cb) == [Severity.ERROR]
    assert severities("trainer0 = None  # reads callback_metrics\n" + fit('EarlyStopping(monitor="val_acc")')) == [
        Severity.ERROR
    ]
    writes = 'def hook(trainer):\n    trainer.callback_metrics["val_acc"] = 1.0\n'
    assert severities(writes + fit('EarlyStopping(monitor="val_acc")')) == []
    replaces = MODULE + "\n    def configure_callbacks(self):\n        return []\n"
    assert severities(fit('EarlyStopping(monitor="val_acc")'), replaces) == []


@pytest.mark.parametrize(
    "line",
    [
        'trainer.logger.experiment.log({"examples": 1})',  # W&B through the logger: not a callback metric
        'trainer.loggers[0].experiment.log({"examples": 1})',
        'wandb.log({"val_acc": 1.0})',
        "x = torch.log(torch.tensor(2.0)) + torch.tensor(1.0).log()",
        'logging.log(20, "done")',
    ],
)
def test_a_callback_logging_elsewhere_does_not_feed_callback_metrics(line: str):
    cb = (
        MODULE
        + f"""
class Samples(Callback):
    def on_validation_end(self, trainer, pl_module):
        {line}
"""
    )
    assert severities(fit('Samples(), EarlyStopping(monitor="val_acc")'), cb) == [Severity.ERROR]


def test_a_callback_handing_the_module_log_on_keeps_it_silent():
    cb = (
        MODULE
        + """
class Handed(Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        write = pl_module.log
        write("val_acc", 1.0)
"""
    )
    assert severities(fit('Handed(), EarlyStopping(monitor="val_acc")'), cb) == []


def test_unknown_model_or_callbacks_are_silent():
    assert (
        severities('trainer = L.Trainer(callbacks=[EarlyStopping(monitor="val_acc")])\ntrainer.fit(make_model())\n')
        == []
    )
    assert (
        severities(
            'cbs = load()\ntrainer = L.Trainer(callbacks=cbs + [EarlyStopping(monitor="val_acc")])\ntrainer.fit(Model())\n'
        )
        == []
    )
    assert (
        severities("trainer = L.Trainer(callbacks=[EarlyStopping(monitor=args.monitor)])\ntrainer.fit(Model())\n") == []
    )


def test_plateau_schedulers():
    plateau = (
        MODULE
        + """
    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=0.1)
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "monitor": "val_acc"%s}}
"""
    )
    (f,) = pl002("trainer = L.Trainer()\ntrainer.fit(Model(), train, val)\n", plateau % "")
    assert f.severity is Severity.ERROR and "ReduceLROnPlateau conditioned on metric val_acc" in f.message
    assert f.lightning.startswith("lightning/pytorch/loops/training_epoch_loop.py")
    for extra in (', "strict": False', ', "interval": "step"'):
        assert severities("trainer = L.Trainer()\ntrainer.fit(Model(), train, val)\n", plateau % extra) == [], extra
    manual = (plateau % "").replace(
        "    def training_step", "    automatic_optimization = False\n\n    def training_step"
    )
    assert severities("trainer = L.Trainer()\ntrainer.fit(Model(), train, val)\n", manual) == []
    logged = (plateau % "").replace('"monitor": "val_acc"', '"monitor": "val_loss"')
    assert severities("trainer = L.Trainer()\ntrainer.fit(Model(), train, val)\n", logged) == []


@pytest.mark.parametrize("version", ["1.2.0", "1.2.10", "1.3.8"])
def test_lightning_1_2_and_1_3_judge_early_stopping_at_the_end_of_a_validation(version: str):
    # 1.2/1.3: `EarlyStopping` checks in `on_validation_end` (early_stopping.py:157 of 1.2.0)
    assert severities(fit('EarlyStopping(monitor="val_acc")'), version=version) == [Severity.ERROR]
    f = pl002(fit('EarlyStopping(monitor="val_acc")'), version=version)[0]
    assert f.lightning.startswith("pytorch_lightning/callbacks/early_stopping.py")
    # a name gave its `_step`/`_epoch` forms at any level then: silent
    for key in ("val_loss", "val_loss_step", "val_loss_epoch", "early_stop_on"):
        assert severities(fit(f'EarlyStopping(monitor="{key}")'), version=version) == [], key
    # no validation loop, no check; validation data not certainly given: possible
    no_validation = MODULE.replace("def validation_step", "def other_step")
    assert severities(fit('EarlyStopping(monitor="val_acc")'), no_validation, version=version) == []
    assert severities(fit('EarlyStopping(monitor="val_acc")', fit_args="train"), version=version) == [Severity.WARNING]
    # `ModelCheckpoint` and `ReduceLROnPlateau` checked otherwise then: not judged
    assert severities(fit('ModelCheckpoint(monitor="val_acc")'), version=version) == []


def test_before_1_3_a_returned_log_dict_fed_the_monitors():
    returns = MODULE.replace('self.log("val_loss", 1.0)', 'return {"log": {"val_acc": 1.0}}')
    assert severities(fit('EarlyStopping(monitor="val_acc")'), returns, version="1.2.10") == []
    assert severities(fit('EarlyStopping(monitor="val_acc")'), returns, version="1.3.8") == [Severity.ERROR]
    assert severities(fit('EarlyStopping(monitor="val_acc")'), returns) == [Severity.ERROR]


def test_lightning_before_1_2_is_not_judged():
    assert severities(fit('EarlyStopping(monitor="val_acc")'), version="1.1.8") == []


def test_where_early_stopping_checks():
    no_validation = MODULE.replace("def validation_step", "def other_step")
    # 2.x: at the training epoch's end by default, so without a validation loop too
    assert severities(fit('EarlyStopping(monitor="val_acc")'), no_validation) == [Severity.ERROR]
    # at a validation's end: asked for, or validation not every epoch (early_stopping.py:135-139)
    assert severities(fit('EarlyStopping(monitor="val_acc", check_on_train_epoch_end=False)'), no_validation) == []
    assert severities(fit('EarlyStopping(monitor="val_acc")', "check_val_every_n_epoch=2, "), no_validation) == []
    assert severities(fit('EarlyStopping(monitor="val_acc", check_on_train_epoch_end=True)'), no_validation) == [
        Severity.ERROR
    ]
    assert severities(
        fit('EarlyStopping(monitor="val_acc", check_on_train_epoch_end=True)', "check_val_every_n_epoch=2, "),
        no_validation,
    ) == [Severity.WARNING]
    # 1.3: at a validation's end unless told otherwise
    assert severities(fit('EarlyStopping(monitor="val_acc")'), no_validation, version="1.3.8") == []
    assert severities(
        fit('EarlyStopping(monitor="val_acc", check_on_train_epoch_end=True)'), no_validation, version="1.3.8"
    ) == [Severity.ERROR]


@pytest.mark.parametrize("version", ["1.4.9", "1.6.3", "1.9.5"])
def test_lightning_1_4_to_1_9_monitors_only_what_self_log_logged(version: str):
    # 1.4-1.9 check as 2.x does (`model_checkpoint.py` / `early_stopping.py` of 1.4.9 and 1.9.0)
    assert severities(fit('EarlyStopping(monitor="val_acc")'), version=version) == [Severity.ERROR]
    assert severities(fit('EarlyStopping(monitor="val_loss")'), version=version) == []
    # a 1.x module logs in `*_epoch_end` / `*_step_end` too (fx_validator.py:137-154 of 1.9.0)
    epoch_end = MODULE + '\n    def validation_epoch_end(self, outputs):\n        self.log("val_acc", 1.0)\n'
    assert severities(fit('EarlyStopping(monitor="val_acc")'), epoch_end, version=version) == []
    step_end = MODULE + '\n    def training_step_end(self, out):\n        self.log("train_acc", 1.0)\n'
    assert severities(fit('EarlyStopping(monitor="train_acc")'), step_end, version=version) == []


def test_keys_computed_in_a_loop_over_a_literal_dict_are_each_of_its_keys():
    # torch-choice's shape: `for key, val in self._perf(batch).items(): self.log("val_" + key, val)`
    loop = (
        MODULE.replace(
            'self.log("val_loss", 1.0)',
            'for key, val in self._perf(batch).items():\n            self.log("val_" + key, val)',
        )
        + '\n    def _perf(self, batch):\n        return {"log_likelihood": 1.0, "acc": 2.0}\n'
    )
    for key in ("val_log_likelihood", "val_acc"):
        assert severities(fit(f'EarlyStopping(monitor="{key}")'), loop) == [], key
    (f,) = pl002(fit('EarlyStopping(monitor="val_ll")'), loop)
    assert f.severity is Severity.ERROR and "`val_acc`, `val_log_likelihood`" in f.message
    keys = loop.replace("self._perf(batch).items()", "self._perf(batch).keys()").replace(
        "for key, val in", "for key in"
    )
    assert severities(
        fit('EarlyStopping(monitor="val_ll")'),
        keys.replace('self.log("val_" + key, val)', 'self.log("val_" + key, 1.0)'),
    ) == [Severity.ERROR]
    # a dict whose keys are not all literals, or a value that is not a dict display: only the prefix is known
    for other in ('{"acc": 1.0, name: 2.0}', "dict(acc=1.0)", "self.metrics"):
        unknown = loop.replace('{"log_likelihood": 1.0, "acc": 2.0}', other)
        assert severities(fit('EarlyStopping(monitor="val_ll")'), unknown) == [], other


def test_a_lightning_cli_trainer_is_silent_but_a_hint_with_report_unknown():
    body = (
        "from lightning.pytorch.cli import LightningCLI\n"
        "cli = LightningCLI(Model, run=False)\n"
        "cli.trainer.fit(Model(), train, val)\n"
    )
    assert severities(body) == []
    source = HEAD + textwrap.dedent(MODULE) + body
    analyzer = Analyzer(Workspace(), [PL002], report_unknown=True)
    (hint,) = [f for f in analyzer.analyze(source, None) if f.code == "PL002"]
    assert hint.severity is Severity.HINT and "The callbacks of `cli.trainer` are not known statically" in hint.message


def test_a_module_without_training_step_fails_fit_first():
    # samy_mlops: fit raises "No `training_step()` method defined" (configuration_validator.py:52)
    # before any monitor is checked
    bare = "class Model(L.LightningModule):\n    def forward(self, x):\n        return x\n"
    assert severities(fit('EarlyStopping(monitor="val_loss")'), bare) == []
    assert severities(fit('EarlyStopping(monitor="val_acc")')) == [Severity.ERROR]


def test_a_project_subclass_of_a_monitor_counts_as_it_only_without_methods_of_its_own():
    plain = "class MyStop(EarlyStopping):\n    pass\n\n"
    assert severities(plain + fit('MyStop(monitor="val_acc")')) == [Severity.ERROR]
    # its own hook may check elsewhere, or never
    hooked = "class MyStop(EarlyStopping):\n    def on_train_epoch_end(self, trainer, pl_module):\n        pass\n\n"
    assert severities(hooked + fit('MyStop(monitor="val_acc")')) == []
