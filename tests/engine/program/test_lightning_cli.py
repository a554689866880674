"""``LightningCLI(Model, ...)``: the classes it runs are known (``cli.model``, the subcommands it may
run), its Trainer is not (``lightning/pytorch/cli.py`` 2.6.6: ``__init__`` ``:398-419``,
``subcommands`` ``:499``, ``_run_subcommand`` ``:750``)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from fabric_lsp.engine.analyzer import Analyzer
from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.python.values import Instance, LightningCLIInst, TrainerInst, Unknown
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import RULES_BY_CODE

from tests.engine.program.test_trainer_values import _values

MODEL = """
import torch
import lightning as L
from lightning.pytorch.cli import LightningCLI

class Model(L.LightningModule):
    def training_step(self, batch, batch_idx):
        return batch.sum()

    def training_epoch_end(self, outputs):
        print(len(outputs))

"""


def _pl(code: str, source: str, path: str | None = None, workspace: Workspace | None = None):
    analyzer = Analyzer(workspace or Workspace(), [RULES_BY_CODE[code]])
    return [f for f in analyzer.analyze(textwrap.dedent(source).lstrip(), path) if f.code == code]


def test_the_subcommand_is_a_choice_of_the_command_line():
    (finding,) = _pl("PL004", MODEL + "LightningCLI(Model)\n")
    assert finding.severity is Severity.WARNING
    assert any(
        "`LightningCLI` runs `Trainer.fit` on it when its command line says `fit`" in r.message for r in finding.related
    )


def test_a_written_fit_subcommand_certainly_runs():
    (finding,) = _pl("PL004", MODEL + 'LightningCLI(Model, args=["fit", "--trainer.max_epochs=1"])\n')
    assert finding.severity is Severity.ERROR
    assert "`LightningCLI(...)` runs `Model`" in finding.message


def test_a_written_test_subcommand_does_not_check_the_training_hook():
    assert _pl("PL004", MODEL + 'LightningCLI(Model, args=["test"])\n') == []


def test_the_main_guard_is_what_runs_when_the_script_runs():
    (finding,) = _pl("PL004", MODEL + 'if __name__ == "__main__":\n    LightningCLI(Model, args=["fit"])\n')
    assert finding.severity is Severity.ERROR
    (finding,) = _pl("PL004", MODEL + 'if "__main__" == __name__:\n    L.Trainer().fit(Model())\n')
    assert finding.severity is Severity.ERROR
    (finding,) = _pl("PL004", MODEL + 'if __name__ != "__main__":\n    L.Trainer().fit(Model())\n')
    assert finding.severity is Severity.WARNING


def test_run_false_runs_nothing_but_its_model_is_known():
    src = MODEL + "cli = LightningCLI(Model, run=False)\ncli.trainer.test(cli.model)\n"
    assert _pl("PL004", src) == []  # only `test` runs it, which does not check `training_epoch_end`
    src = MODEL + "cli = LightningCLI(Model, run=False)\ncli.trainer.fit(cli.model)\n"
    (finding,) = _pl("PL004", src)
    assert finding.severity is Severity.ERROR


def test_subclass_mode_runs_the_subclasses_of_the_class_given():
    src = """
    import lightning as L
    from lightning.pytorch.cli import LightningCLI

    class Base(L.LightningModule):
        pass

    class Sub(Base):
        def validation_epoch_end(self, outputs):
            pass

    LightningCLI(Base, subclass_mode_model=True, args=["validate"])
    """
    (finding,) = _pl("PL004", src)
    assert finding.severity is Severity.WARNING  # the config may pick another subclass
    assert any("LightningCLI" in r.message for r in finding.related)


def test_without_subclass_mode_a_base_does_not_run_its_subclass():
    src = """
    import lightning as L
    from lightning.pytorch.cli import LightningCLI

    class Base(L.LightningModule):
        pass

    class Sub(Base):
        def validation_epoch_end(self, outputs):
            pass

    LightningCLI(Base, args=["test"])
    """
    # the only entry point seen runs `Base` with `test`: `Sub` is not run by it, and no call runs `Sub`
    (finding,) = _pl("PL004", src)
    assert not any("LightningCLI" in r.message for r in finding.related)


def test_a_project_subclass_of_lightning_cli(tmp_path: Path):
    (tmp_path / "model.py").write_text(textwrap.dedent(MODEL).lstrip())
    (tmp_path / "main.py").write_text(
        "from lightning.pytorch.cli import LightningCLI\nfrom model import Model\n\n"
        "class MyCLI(LightningCLI):\n    def add_arguments_to_parser(self, parser):\n        pass\n\n"
        'MyCLI(Model, args=["fit"])\n'
    )
    ws = Workspace(str(tmp_path))
    (finding,) = _pl("PL004", (tmp_path / "model.py").read_text(), str(tmp_path / "model.py"), ws)
    assert finding.severity is Severity.ERROR
    assert finding.related[0].path == str(tmp_path / "main.py")


def test_pl003_several_optimizers_under_the_cli():
    src = """
    import torch
    import lightning as L
    from lightning.pytorch.cli import LightningCLI

    class GAN(L.LightningModule):
        def training_step(self, batch, batch_idx):
            return batch.sum()

        def configure_optimizers(self):
            return torch.optim.Adam(self.parameters()), torch.optim.Adam(self.parameters())

    LightningCLI(GAN)
    """
    (finding,) = _pl("PL003", src)
    assert finding.severity is Severity.WARNING
    (finding,) = _pl("PL003", src.replace("LightningCLI(GAN)", 'LightningCLI(GAN, args=["fit"])'))
    assert finding.severity is Severity.ERROR


@pytest.mark.parametrize(
    "call, models, subclasses",
    [
        ("LightningCLI(Model)", 1, False),
        ("LightningCLI(model_class=Model, datamodule_class=None)", 1, False),
        ("LightningCLI(Model, subclass_mode_model=True)", 1, True),
        ("LightningCLI()", 0, True),
        ("LightningCLI(None)", 0, True),
    ],
)
def test_the_cli_value(call: str, models: int, subclasses: bool):
    (cli,) = _values(MODEL + f"cli = {call}\ncli")
    assert isinstance(cli, LightningCLIInst)
    assert len(cli.models) == models and cli.model_subclasses is subclasses
    model = _values(MODEL + f"cli = {call}\ncli.model")
    assert sum(isinstance(v, Instance) and v.cls.name == "Model" and bool(v.filled) for v in model) == models
    assert any(isinstance(v, Unknown) for v in model) is (subclasses or not models)
    assert not any(isinstance(v, TrainerInst) for v in _values(MODEL + f"cli = {call}\ncli.trainer"))


@pytest.mark.parametrize(
    "keywords, subcommands, written",
    [
        ("", ("fit", "validate", "test", "predict"), False),
        (", run=False", (), True),
        (', args=["predict"]', ("predict",), True),
        (", args=argv", ("fit", "validate", "test", "predict"), False),
        (', args=["--config", "c.yaml"]', ("fit", "validate", "test", "predict"), False),
    ],
)
def test_the_subcommands(keywords: str, subcommands: tuple, written: bool):
    (cli,) = _values(MODEL + f"cli = LightningCLI(Model{keywords})\ncli")
    assert (cli.subcommands, cli.written) == (subcommands, written)


LOGGING = """
import torch
import lightning as L
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint
from lightning.pytorch.cli import LightningCLI

class Model(L.LightningModule):
    def training_step(self, batch, batch_idx):
        return batch.sum()

    def validation_step(self, batch, batch_idx):
        self.log("val/loss", batch.sum())

"""


@pytest.mark.parametrize(
    "call, reported",
    [
        ('LightningCLI(Model, trainer_defaults={"callbacks": [EarlyStopping(monitor="val_loss")]})', True),
        ('LightningCLI(Model, trainer_defaults={"callbacks": [ModelCheckpoint(monitor="val_loss")]})', True),
        ('LightningCLI(Model, trainer_defaults={"callbacks": [EarlyStopping(monitor="val/loss")]})', False),
        (
            'LightningCLI(Model, trainer_defaults={"callbacks": [EarlyStopping(monitor="val_loss", strict=False)]})',
            False,
        ),
        (
            'LightningCLI(Model, trainer_defaults={"callbacks": [EarlyStopping(monitor="val_loss")], "limit_val_batches": 0})',
            False,
        ),
        (
            'LightningCLI(Model, subclass_mode_model=True, trainer_defaults={"callbacks": [EarlyStopping(monitor="val_loss")]})',
            False,
        ),
        (
            'LightningCLI(Model, args=["test"], trainer_defaults={"callbacks": [EarlyStopping(monitor="val_loss")]})',
            False,
        ),
        ('LightningCLI(Model, run=False, trainer_defaults={"callbacks": [EarlyStopping(monitor="val_loss")]})', False),
        ("LightningCLI(Model, trainer_defaults=defaults)", False),
        ("LightningCLI(Model)", False),
    ],
)
def test_pl002_the_callbacks_of_trainer_defaults(call: str, reported: bool):
    findings = _pl("PL002", LOGGING + f"defaults = make()\n{call}\n")
    assert [f.severity for f in findings] == ([Severity.WARNING] if reported else [])
    if reported:
        assert "its `fit` subcommand may raise" in findings[0].message
        assert "Did you mean `val/loss`?" in findings[0].message


def test_pl002_a_plateau_monitor_of_the_model_a_cli_fits():
    src = (
        LOGGING
        + """
    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=0.1)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": torch.optim.lr_scheduler.ReduceLROnPlateau(opt), "monitor": "val_acc"}}

LightningCLI(Model)
"""
    )
    (finding,) = _pl("PL002", src)
    assert finding.severity is Severity.WARNING and "`val_acc`" in finding.message
