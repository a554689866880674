"""PL001 beyond its examples: each rank-guard spelling, each site, severity by processes,
precision, and the LightningModule and its Trainer in different modules."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from fabric_lsp.engine.analyzer import Analyzer
from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import RULES_BY_CODE

PL001 = RULES_BY_CODE["PL001"]
TRAINER = 'trainer = L.Trainer(accelerator="cpu", devices=2)\ntrainer.fit(Model())\n'


def pl001(source: str, path: str | None = None, workspace: Workspace | None = None):
    analyzer = Analyzer(workspace or Workspace(), [PL001])
    return [f for f in analyzer.analyze(textwrap.dedent(source).lstrip(), path) if f.code == "PL001"]


def module(body: str, trainer: str = TRAINER) -> str:
    head = "import lightning as L\nfrom lightning.pytorch.utilities import rank_zero_only\n\nclass Model(L.LightningModule):\n"
    return head + textwrap.indent(textwrap.dedent(body).lstrip(), "    ") + "\n" + trainer


GUARDS = {
    "trainer is_global_zero": "def on_train_end(self):\n    if self.trainer.is_global_zero:\n        SITE\n",
    "global_rank == 0": "def on_train_end(self):\n    if self.global_rank == 0:\n        SITE\n",
    "local_rank == 0": "def on_train_end(self):\n    if self.local_rank == 0:\n        SITE\n",
    "not is_global_zero else": "def on_train_end(self):\n    if not self.trainer.is_global_zero:\n        pass\n    else:\n        SITE\n",
    "early return": "def on_train_end(self):\n    if self.trainer.global_rank != 0:\n        return\n    SITE\n",
    "rank_zero_only": "@rank_zero_only\ndef on_train_end(self):\n    SITE\n",
    "guarded helper": "def _save(self):\n    SITE\n\ndef on_train_end(self):\n    if self.trainer.is_global_zero:\n        self._save()\n",
}


@pytest.mark.parametrize("guard", sorted(GUARDS))
def test_each_guard_spelling(guard):
    (finding,) = pl001(module(GUARDS[guard].replace("SITE", 'self.trainer.save_checkpoint("x.ckpt")')))
    assert finding.severity is Severity.ERROR


@pytest.mark.parametrize(
    "site",
    [
        'self.trainer.save_checkpoint("x.ckpt")',
        "self.all_gather(1)",
        'self.log("a", 1.0, sync_dist=True)',
        'self.log_dict({"a": 1.0}, sync_dist=True)',
        "self.trainer.strategy.barrier()",
        "self.trainer.strategy.broadcast(1)",
        "self.trainer.strategy.reduce(1)",
        "print(self.trainer.log_dir)",
    ],
)
def test_each_site(site):
    (finding,) = pl001(module(GUARDS["trainer is_global_zero"].replace("SITE", site)))
    assert finding.severity is Severity.ERROR


@pytest.mark.parametrize(
    "site",
    [
        'self.log("a", 1.0, sync_dist=True, rank_zero_only=True)',
        'self.log("a", 1.0)',
        'torch.save(self.state_dict(), "m.pt")',
        'print("done")',
    ],
)
def test_not_collectives_under_a_guard(site):
    assert pl001(module(GUARDS["global_rank == 0"].replace("SITE", site))) == []


def test_unguarded_collective():
    assert pl001(module('def on_train_end(self):\n    self.trainer.save_checkpoint("x.ckpt")\n')) == []


@pytest.mark.parametrize(
    ("trainer", "severity"),
    [
        ('trainer = L.Trainer(accelerator="cpu", devices=2)\ntrainer.fit(Model())\n', Severity.ERROR),
        ("trainer = L.Trainer(num_nodes=2)\ntrainer.fit(Model())\n", Severity.ERROR),
        ("trainer = L.Trainer()\ntrainer.fit(Model())\n", Severity.WARNING),
        ('trainer = L.Trainer(devices="auto")\ntrainer.fit(Model())\n', Severity.WARNING),
        ('trainer = L.Trainer(accelerator="cpu", devices=1)\ntrainer.fit(Model())\n', None),
        ("trainer = L.Trainer(devices=args.devices)\ntrainer.fit(Model())\n", None),
        ("trainer.fit(Model())\n", None),  # a Trainer that is not visible
        (
            'a = L.Trainer(accelerator="cpu", devices=2)\nb = L.Trainer(devices=1)\na.fit(Model())\nb.fit(Model())\n',
            Severity.WARNING,
        ),
    ],
)
def test_severity_by_processes(trainer, severity):
    body = GUARDS["trainer is_global_zero"].replace("SITE", 'self.trainer.save_checkpoint("x.ckpt")')
    found = pl001(module(body, trainer))
    assert [f.severity for f in found] == ([severity] if severity else [])


@pytest.mark.parametrize(
    ("guard", "trainer", "severity"),
    [
        # one device per node: every process is local rank 0, so the test leaves none out
        ("local_rank == 0", 'L.Trainer(accelerator="cpu", devices=1, num_nodes=2)', None),
        ("local_rank == 0", 'L.Trainer(accelerator="cpu", devices=2, num_nodes=2)', Severity.ERROR),
        ("global_rank == 0", 'L.Trainer(accelerator="cpu", devices=1, num_nodes=2)', Severity.ERROR),
    ],
)
def test_a_local_rank_test_divides_the_processes_of_a_node(guard, trainer, severity):
    body = GUARDS[guard].replace("SITE", 'self.trainer.save_checkpoint("x.ckpt")')
    found = pl001(module(body, f"trainer = {trainer}\ntrainer.fit(Model())\n"))
    assert [f.severity for f in found] == ([severity] if severity else [])


def test_script_sites():
    guarded = 'import lightning as L\ntrainer = L.Trainer(accelerator="cpu", devices=2, strategy=STRATEGY)\ntrainer.fit(model)\nif trainer.is_global_zero:\n    trainer.save_checkpoint("x.ckpt")\n'
    (finding,) = pl001(guarded.replace("STRATEGY", '"ddp"'))
    assert finding.severity is Severity.ERROR
    assert pl001(guarded.replace("STRATEGY", '"ddp_spawn"')) == []  # only the launcher runs it


def test_log_dir_before_fit_in_the_script():
    source = 'import lightning as L\ntrainer = L.Trainer(accelerator="cpu", devices=2)\nif trainer.is_global_zero:\n    print(trainer.log_dir)\ntrainer.fit(model)\n'
    assert pl001(source) == []


def test_callback_hook_with_its_trainer():
    source = (
        "import lightning as L\n\nclass Saver(L.Callback):\n    def on_validation_end(self, trainer, pl_module):\n"
        '        if trainer.is_global_zero:\n            trainer.save_checkpoint("x.ckpt")\n\n'
        'trainer = L.Trainer(accelerator="cpu", devices=2, callbacks=[Saver()])\ntrainer.fit(model)\n'
    )
    (finding,) = pl001(source)
    assert finding.severity is Severity.ERROR


def _workspace(root: Path, files: dict[str, str]) -> Workspace:
    for name, text in files.items():
        (root / name).write_text(text)
    return Workspace(str(root))


@pytest.mark.parametrize(("devices", "severity"), [("2", Severity.ERROR), ("1", None)])
def test_module_in_one_file_trainer_in_another(tmp_path, devices, severity):
    model = module(GUARDS["trainer is_global_zero"].replace("SITE", 'self.trainer.save_checkpoint("x.ckpt")'), "")
    train = f'import lightning as L\nfrom model import Model\ntrainer = L.Trainer(accelerator="cpu", devices={devices})\ntrainer.fit(Model())\n'
    ws = _workspace(tmp_path, {"model.py": model, "train.py": train})
    found = pl001(model, str(tmp_path / "model.py"), ws)
    assert [f.severity for f in found] == ([severity] if severity else [])


@pytest.mark.parametrize(
    ("strategy", "flagged"),
    [
        ('"auto"', True),
        ('"ddp"', True),
        ('"ddp_notebook"', False),
        ("DDPStrategy()", True),
        ('DDPStrategy(start_method="spawn")', False),
        ("args.strategy", False),
    ],
)
def test_script_save_checkpoint_after_fit_by_launcher(strategy, flagged):
    source = (
        "import lightning as L\nfrom lightning.pytorch.strategies import DDPStrategy\n"
        f'trainer = L.Trainer(accelerator="cpu", devices=2, strategy={strategy})\ntrainer.fit(model)\n'
        'if trainer.is_global_zero:\n    trainer.save_checkpoint("x.ckpt")\n'
    )
    assert bool(pl001(source)) is flagged


@pytest.mark.parametrize(
    "site", ["print(trainer.log_dir)", "trainer.strategy.barrier()", "trainer.strategy.broadcast(1)"]
)
@pytest.mark.parametrize(("fit_first", "flagged"), [(False, False), (True, True)])
def test_script_collectives_before_and_after_fit(site, fit_first, flagged):
    guarded = f"if trainer.is_global_zero:\n    {site}\n"
    fit = "trainer.fit(model)\n"
    body = fit + guarded if fit_first else guarded + fit
    source = 'import lightning as L\ntrainer = L.Trainer(accelerator="cpu", devices=2)\n' + body
    assert bool(pl001(source)) is flagged


SAVE = (
    'def on_train_end(self):\n    if self.trainer.is_global_zero:\n        self.trainer.save_checkpoint("last.ckpt")\n'
)


def test_a_trainer_from_a_factory_is_followed():
    factory = 'def make_trainer(n):\n    return L.Trainer(accelerator="cpu", devices=n)\n\ntrainer = make_trainer(2)\ntrainer.fit(Model())\n'
    (finding,) = pl001(module(SAVE, factory))
    assert finding.severity is Severity.ERROR
    assert pl001(module(SAVE, factory.replace("make_trainer(2)", "make_trainer(1)"))) == []


def test_a_trainer_passed_through_an_alias_is_followed():
    aliased = 'built = L.Trainer(accelerator="cpu", devices=2)\ntrainer = built\ntrainer.fit(Model())\n'
    (finding,) = pl001(module(SAVE, aliased))
    assert finding.severity is Severity.ERROR


def test_a_script_site_after_fit_under_a_spawning_strategy_is_silent():
    script = (
        "import lightning as L\n\nclass Model(L.LightningModule):\n    pass\n\n"
        'trainer = L.Trainer(accelerator="cpu", devices=2, strategy=STRATEGY)\ntrainer.fit(Model())\n'
        'if trainer.is_global_zero:\n    trainer.save_checkpoint("last.ckpt")\n'
    )
    assert pl001(script.replace("STRATEGY", '"ddp_spawn"')) == []  # only the launching process runs on
    (finding,) = pl001(script.replace("STRATEGY", '"ddp"'))  # every process re-runs the script
    assert finding.severity is Severity.ERROR


def test_a_lightning_cli_trainer_is_not_known():
    cli = "from lightning.pytorch.cli import LightningCLI\nLightningCLI(Model)\n"
    assert pl001(module(SAVE, cli)) == []


CALLBACK = """
import lightning as L

class Sync(L.Callback):
    def on_train_epoch_end(self, trainer, pl_module):
        if trainer.global_rank != 0:
            return
        SITE

class Model(L.LightningModule):
    pass

trainer = L.Trainer(accelerator="cpu", devices=2, callbacks=[Sync()])
trainer.fit(Model())
"""


@pytest.mark.parametrize(
    "site",
    [
        'pl_module.log("loss", 1.0, sync_dist=True)',
        "pl_module.all_gather(1.0)",
        'pl_module.log_dict({"a": 1.0}, sync_dist=True)',
    ],
)
def test_the_module_of_a_callback_hook(site: str):
    (finding,) = pl001(CALLBACK.replace("SITE", site))
    assert finding.severity is Severity.ERROR and "`pl_module." in finding.message


def test_the_module_of_a_callback_hook_is_the_third_parameter_only():
    assert pl001(CALLBACK.replace("SITE", 'trainer.log("x", 1.0, sync_dist=True)')) == []
    assert pl001(CALLBACK.replace("SITE", 'pl_module.log("loss", 1.0, sync_dist=True, rank_zero_only=True)')) == []


OPTION = """
import argparse
import lightning as L

class Model(L.LightningModule):
    def on_train_end(self):
        if self.trainer.is_global_zero:
            self.trainer.save_checkpoint("last.ckpt")

p = argparse.ArgumentParser()
p.add_argument("--devices", type=int, default=DEFAULT)
args = p.parse_args()
trainer = L.Trainer(accelerator="cpu", devices=args.devices)
trainer.fit(Model())
"""


def test_an_option_whose_default_runs_several_processes_is_a_warning():
    (finding,) = pl001(OPTION.replace("DEFAULT", "2"))
    assert finding.severity is Severity.WARNING
    assert pl001(OPTION.replace("DEFAULT", "1")) == []  # other values are not known: nothing


HELPER = """
import lightning as L
from lightning.pytorch.utilities import rank_zero_only

DECORATOR
def save_final(run_trainer: L.Trainer):
    GUARD
        run_trainer.save_checkpoint("x.ckpt")


def main():
    trainer = L.Trainer(accelerator="cpu", devices=DEVICES, strategy="ddp")
    BEFORE
    trainer.fit(model)
    AFTER


main()
"""


def _helper(decorator: str, guard: str, devices: int = 2, before: str = "", after: str = "save_final(trainer)") -> str:
    text = HELPER.replace("DECORATOR", decorator).replace("GUARD", guard).replace("DEVICES", str(devices))
    return text.replace("BEFORE", before or "pass").replace("AFTER", after or "pass")


@pytest.mark.parametrize(
    ("decorator", "guard"),
    [
        ("", "if run_trainer.is_global_zero:"),
        ("@rank_zero_only", "if True:"),
        ("@rank_zero_only", "if run_trainer is not None:"),
    ],
)
def test_a_helper_given_the_trainer_after_fit(decorator: str, guard: str):
    # Smol-LM / disque / V-AURA: `def save(trainer): if trainer.is_global_zero: trainer.save_checkpoint(...)`
    # defined above the script's `fit`, called after it: the process group exists at the call
    (finding,) = pl001(_helper(decorator, guard))
    assert finding.severity is Severity.ERROR
    assert pl001(_helper(decorator, guard, devices=1)) == []
    # called only before `fit` (no process group yet: the barrier does nothing), or never
    assert pl001(_helper(decorator, guard, before="save_final(trainer)", after="")) == []
    assert pl001(_helper(decorator, guard, after="")) == []


def test_a_decorator_that_may_call_with_other_values_keeps_the_helper_unknown():
    # a decorator not known to call through (click, hydra, a project's own) may call it with any
    # Trainer (`run_trainer: L.Trainer`, of unknown configuration); `@rank_zero_only` calls through
    assert pl001(_helper("@some_registry.register", "if run_trainer.is_global_zero:")) == []
    assert len(pl001(_helper("@rank_zero_only", "if True:"))) == 1
