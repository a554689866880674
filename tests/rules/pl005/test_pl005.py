"""PL005 beyond its examples: each failing condition, paths, unknown receivers, Lightning's
runtime proofs."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from fabric_lsp.engine.analyzer import Analyzer
from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import RULES_BY_CODE

PL005 = RULES_BY_CODE["PL005"]
HEAD = """
import argparse
import lightning as L
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint
from model import Model

model = Model()
"""


def pl005(body: str):
    source = HEAD + textwrap.dedent(body).lstrip()
    analyzer = Analyzer(Workspace(), [PL005])
    return [f for f in analyzer.analyze(source, None) if f.code == "PL005"]


def severities(body: str) -> list[Severity]:
    return [f.severity for f in pl005(body)]


def test_checkpointing_off_quotes_lightning():
    (f,) = pl005(
        "trainer = L.Trainer(enable_checkpointing=False)\ntrainer.fit(model)\ntrainer.test(model, ckpt_path='best')\n"
    )
    assert f.severity is Severity.ERROR
    assert "is set but `ModelCheckpoint` is not configured." in f.message
    assert f.lightning == "lightning/pytorch/trainer/connectors/checkpoint_connector.py:165-166"
    assert f.fix is None and f.related


def test_fast_dev_run_and_an_int_fast_dev_run():
    for value in ("True", "3"):
        (f,) = pl005(
            f"trainer = L.Trainer(fast_dev_run={value})\ntrainer.fit(model)\ntrainer.test(model, ckpt_path='best')\n"
        )
        assert f.severity is Severity.ERROR and "fast_dev_run=True" in f.message and f.lightning.endswith(":168-174")
    assert (
        severities("trainer = L.Trainer(fast_dev_run=0)\ntrainer.fit(model)\ntrainer.test(model, ckpt_path='best')\n")
        == []
    )


def test_save_top_k_zero_on_the_first_checkpoint_only():
    body = "ck = ModelCheckpoint(save_top_k=0)\ntrainer = L.Trainer(callbacks=[EarlyStopping('v'), ck])\ntrainer.fit(model)\ntrainer.test(model, ckpt_path='best')\n"
    (f,) = pl005(body)
    assert (
        f.severity is Severity.ERROR
        and "not configured to save the best model" in f.message
        and "save_top_k=0" in f.message
    )
    second = "trainer = L.Trainer(callbacks=[ModelCheckpoint(monitor='v'), ModelCheckpoint(save_top_k=0)])\ntrainer.fit(model)\ntrainer.test(model, ckpt_path='best')\n"
    assert severities(second) == []


def test_default_trainer_after_fit_is_fine():
    assert (
        severities("trainer = L.Trainer()\ntrainer.fit(model)\ntrainer.test(model, ckpt_path='best')\ntrainer.test()\n")
        == []
    )


def test_a_second_trainer_that_never_ran_fit():
    (f,) = pl005("L.Trainer().fit(model)\ntester = L.Trainer()\ntester.validate(model, ckpt_path='best')\n")
    assert f.severity is Severity.ERROR and "no `fit` ran on this Trainer" in f.message


def test_a_second_trainer_given_a_checkpoint_object_built_before_is_silent():
    # "best" reads the callback's own best_model_path, which the first Trainer's fit filled in
    body = (
        "ckpt = ModelCheckpoint(monitor='val_loss')\n"
        "L.Trainer(callbacks=[ckpt]).fit(model)\n"
        "tester = L.Trainer(devices=1, callbacks=[ckpt])\n"
        "tester.test(model, ckpt_path='best')\n"
    )
    assert pl005(body) == []
    inline = "L.Trainer().fit(model)\ntester = L.Trainer(callbacks=[ModelCheckpoint()])\ntester.test(model, ckpt_path='best')\n"
    assert severities(inline) == [Severity.ERROR]


@pytest.mark.parametrize(
    "body",
    [
        # handed to a function, returned, stored on an object, read by another scope
        "ckpt = ModelCheckpoint()\nfit_elsewhere(ckpt)\ntester = L.Trainer(callbacks=[ckpt])\ntester.test(model, ckpt_path='best')\n",
        "def make():\n    ckpt = ModelCheckpoint()\n    t = L.Trainer(callbacks=[ckpt])\n    t.test(model, ckpt_path='best')\n    return ckpt\n",
        "ckpt = ModelCheckpoint()\nholder.ckpt = ckpt\ntester = L.Trainer(callbacks=[ckpt])\ntester.test(model, ckpt_path='best')\n",
        "ckpt = ModelCheckpoint()\ntester = L.Trainer(callbacks=[ckpt])\ntester.test(model, ckpt_path='best')\ndef later():\n    return ckpt\n",
        # its best_model_path written; a Trainer built again in a loop with the same object
        "ckpt = ModelCheckpoint()\nckpt.best_model_path = 'a.ckpt'\ntester = L.Trainer(callbacks=[ckpt])\ntester.test(model, ckpt_path='best')\n",
        "ckpt = ModelCheckpoint()\nfor fold in range(2):\n    t = L.Trainer(callbacks=[ckpt])\n    t.test(model, ckpt_path='best')\n",
    ],
)
def test_a_checkpoint_object_that_may_reach_another_trainer_is_silent(body: str):
    assert severities(body) == []


def test_a_checkpoint_object_kept_for_one_trainer_is_followed():
    # through a dict of Trainer arguments, and read afterwards only as `ckpt.<attribute>`
    body = "ckpt = ModelCheckpoint(monitor='v')\nkw = {'callbacks': [ckpt]}\ntester = L.Trainer(**kw)\ntester.test(model, ckpt_path='best')\nprint(ckpt.best_model_path)\n"
    assert severities(body) == [Severity.ERROR]
    looped = "for fold in range(2):\n    ckpt = ModelCheckpoint()\n    t = L.Trainer(callbacks=[ckpt])\n    t.test(model, ckpt_path='best')\n"
    assert severities(looped) == [Severity.ERROR]


def test_a_module_checkpoint_another_module_imports_may_be_shared(tmp_path: Path):
    train = (
        HEAD + "ckpt = ModelCheckpoint()\ntester = L.Trainer(callbacks=[ckpt])\ntester.test(model, ckpt_path='best')\n"
    )
    (tmp_path / "train.py").write_text(train)
    analyzer = Analyzer(Workspace(str(tmp_path)), [PL005])
    assert len(analyzer.analyze(train, str(tmp_path / "train.py"))) == 1
    (tmp_path / "other.py").write_text("from train import ckpt\n")
    analyzer = Analyzer(Workspace(str(tmp_path)), [PL005])
    assert analyzer.analyze(train, str(tmp_path / "train.py")) == []


def test_a_fit_in_the_other_branch_has_not_run():
    body = "trainer = L.Trainer()\nif model.train:\n    trainer.fit(model)\nelse:\n    trainer.test(model, ckpt_path='best')\n"
    assert severities(body) == [Severity.ERROR]
    elif_ = body.replace("else:", "elif model.evaluate:")
    assert severities(elif_) == [Severity.ERROR]
    looped = "trainer = L.Trainer()\nfor stage in ('fit', 'test'):\n    if stage == 'fit':\n        trainer.fit(model)\n    else:\n        trainer.test(model, ckpt_path='best')\n"
    assert severities(looped) == []


def test_a_fit_skipped_as_after_or_exclusive_needs_a_trainer_of_this_run():
    # `run("fit")` then `run("test")` tests what the first call fitted: the same object each time
    shared = "class Loop:\n    def __init__(self):\n        self.trainer = L.Trainer()\n    def run(self, stage):\n        trainer = self.trainer\n        if stage == 'fit':\n            trainer.fit(model)\n        else:\n            trainer.test(model, ckpt_path='best')\n"
    assert severities(shared) == []
    after = shared.replace(
        "        if stage == 'fit':\n            trainer.fit(model)\n        else:\n            trainer.test(model, ckpt_path='best')\n",
        "        trainer.test(model, ckpt_path='best')\n        trainer.fit(model)\n",
    )
    assert severities(after) == []
    fresh = shared.replace("trainer = self.trainer", "trainer = L.Trainer()")
    assert severities(fresh) == [Severity.ERROR]


OPTION = """
parser = argparse.ArgumentParser()
parser.add_argument("--ckpt_path", default=DEFAULT)
parser.add_argument("--stage", choices=["fit", "test"], default="fit")
args = parser.parse_args()
trainer = L.Trainer()
if args.stage == "fit":
    trainer.fit(model)
trainer.test(model, ckpt_path=args.ckpt_path)
"""


def test_an_option_defaulting_to_best_is_a_warning_on_the_default_s_path():
    # M3-AGIQA's shape: `--stage test` with `--ckpt_path` left at its default "best"
    (f,) = pl005(OPTION.replace("DEFAULT", '"best"').replace('if args.stage == "fit":\n    trainer.fit(model)\n', ""))
    assert f.severity is Severity.WARNING
    assert 'when `ckpt_path` is "best", the default of `--ckpt_path`' in f.message
    # a fit before the call on some stage's path only: not known whether it ran
    assert severities(OPTION.replace("DEFAULT", '"best"')) == []
    assert severities(OPTION.replace("DEFAULT", '"last"')) == []


def test_an_option_assigned_after_parsing_is_not_its_default():
    body = OPTION.replace("DEFAULT", '"best"').replace(
        'if args.stage == "fit":\n    trainer.fit(model)\n', "args.ckpt_path = find_checkpoint()\n"
    )
    assert severities(body) == []


def test_fit_in_a_branch_or_passed_away_is_not_known():
    assert (
        severities(
            "trainer = L.Trainer()\nif model.ok:\n    trainer.fit(model)\ntrainer.test(model, ckpt_path='best')\n"
        )
        == []
    )
    assert severities("trainer = L.Trainer()\nrun(trainer)\ntrainer.test(model, ckpt_path='best')\n") == []
    assert (
        severities(
            "trainer = L.Trainer()\ntrainer.fit(model, ckpt_path='x.ckpt')\ntrainer.test(model, ckpt_path='best')\n"
        )
        == []
    )


def test_fit_after_the_call_does_not_count():
    assert severities("trainer = L.Trainer()\ntrainer.test(model, ckpt_path='best')\ntrainer.fit(model)\n") == [
        Severity.ERROR
    ]


def test_a_cli_flag_gives_two_paths_a_warning():
    body = """
    parser = argparse.ArgumentParser()
    parser.add_argument("--debug", action="store_true")
    args = parser.parse_args()
    trainer = L.Trainer(fast_dev_run=args.debug)
    trainer.fit(model)
    trainer.test(model, ckpt_path="best")
    """
    (f,) = pl005(body)
    assert f.severity is Severity.WARNING and "may raise" in f.message


RESUME = """
parser = argparse.ArgumentParser()
parser.add_argument("--dev", action="store_true")
parser.add_argument("--resume", action="store_true")
args = parser.parse_args()
trainer = L.Trainer(fast_dev_run=args.dev)
ckpt_path = None
if RESUME_TEST:
    ckpt_path = "last"
trainer.fit(model, ckpt_path=ckpt_path)
trainer.test(model, ckpt_path="best")
"""


def test_a_fit_resumed_on_other_paths_than_fast_dev_run_s_is_a_warning():
    # SynthWeave's shape: `--dev` gives fast_dev_run=True and never resumes: test("best") raises there
    (f,) = pl005(RESUME.replace("RESUME_TEST", "args.resume and not args.dev"))
    assert f.severity is Severity.WARNING and "fast_dev_run" in f.message
    # `--dev` without `--resume` still fails where the resume does not depend on `--dev`
    assert severities(RESUME.replace("RESUME_TEST", "args.resume")) == [Severity.WARNING]
    # a fit that resumes under fast_dev_run restores the callback's best_model_path: not known
    assert severities(RESUME.replace("ckpt_path=ckpt_path)", 'ckpt_path="last")')) == []
    assert severities(RESUME.replace("ckpt_path=ckpt_path)", "ckpt_path=some_checkpoint)")) == []
    # ckpt_path=None resumes nothing: the fit is a plain fit
    assert severities(RESUME.replace("ckpt_path=ckpt_path)", "ckpt_path=None)")) == [Severity.WARNING]


def test_a_free_option_is_silent():
    body = """
    parser = argparse.ArgumentParser()
    parser.add_argument("--fdr", type=int)
    args = parser.parse_args()
    trainer = L.Trainer(fast_dev_run=args.fdr)
    trainer.fit(model)
    trainer.test(model, ckpt_path="best")
    """
    assert severities(body) == []


def test_two_trainers_on_two_paths():
    body = "if model.debug:\n    trainer = L.Trainer(fast_dev_run=True)\nelse:\n    trainer = L.Trainer()\ntrainer.fit(model)\ntrainer.test(model, ckpt_path='best')\n"
    assert severities(body) == [Severity.WARNING]
    both = body.replace("L.Trainer()", "L.Trainer(enable_checkpointing=False)")
    assert severities(both) == [Severity.ERROR]


def test_unknown_receiver_and_last_are_silent():
    assert severities("def evaluate(trainer: L.Trainer):\n    trainer.test(model, ckpt_path='best')\n") == []
    assert (
        severities(
            "trainer = L.Trainer(fast_dev_run=True)\ntrainer.fit(model)\ntrainer.test(model, ckpt_path='last')\n"
        )
        == []
    )
    assert severities("trainer = L.Trainer(**cfg)\ntrainer.fit(model)\ntrainer.test(model, ckpt_path='best')\n") == []


def test_callbacks_not_fully_known_are_silent():
    loop = "cbs = []\nfor k in (0, 1):\n    cbs.append(ModelCheckpoint(save_top_k=k))\ntrainer = L.Trainer(callbacks=cbs)\ntrainer.fit(model)\ntrainer.test(model, ckpt_path='best')\n"
    assert severities(loop) == []
    appended = "cbs = [ModelCheckpoint(save_top_k=0)]\ncbs.append(ModelCheckpoint())\ntrainer = L.Trainer(callbacks=cbs)\ntrainer.fit(model)\ntrainer.test(model, ckpt_path='best')\n"
    assert severities(appended) == []


def test_checkpoint_callback_with_checkpointing_off_is_the_trainers_own_error():
    body = "trainer = L.Trainer(enable_checkpointing=False, callbacks=[ModelCheckpoint()])\ntrainer.fit(model)\ntrainer.test(model, ckpt_path='best')\n"
    assert severities(body) == []


def test_without_a_model_only_after_fit():
    assert severities(
        "trainer = L.Trainer(enable_checkpointing=False)\ntrainer.fit(model)\ntrainer.predict(datamodule=model.dm)\n"
    ) == [Severity.ERROR]
    assert severities("trainer = L.Trainer(enable_checkpointing=False)\ntrainer.test()\n") == []
    assert (
        severities(
            "trainer = L.Trainer(enable_checkpointing=False)\ntrainer.fit(model)\ntrainer.ckpt_path = 'a.ckpt'\ntrainer.test()\n"
        )
        == []
    )


def test_expected_error_in_a_test_is_silent():
    body = "import pytest\ntrainer = L.Trainer(fast_dev_run=True)\ntrainer.fit(model)\nwith pytest.raises(ValueError):\n    trainer.test(model, ckpt_path='best')\n"
    assert severities(body) == []


PROOF_DIR = Path(__file__).resolve().parents[2] / "runtime" / "rules" / "PL005"
PROOFS = sorted(PROOF_DIR.glob("*.py"))


def test_every_runtime_proof_is_here():
    assert len(PROOFS) == 10


@pytest.mark.parametrize("proof", PROOFS, ids=lambda p: p.name)
def test_runtime_proofs(proof: Path):
    """Lightning's own verdict (tests/runtime/rules/PL005/): the INVALID scripts fail, the VALID forms run."""
    findings = [f for f in Analyzer(Workspace(), [PL005]).analyze(proof.read_text(), None) if f.code == "PL005"]
    if proof.name.endswith(".valid.py"):
        assert findings == []
    else:  # an option's default fails: a configuration the code can choose, a warning
        expected = Severity.WARNING if "option_default" in proof.name else Severity.ERROR
        assert [f.severity for f in findings] == [expected]


def test_a_global_trainer_used_in_a_function_may_be_fit_elsewhere():
    body = "trainer = L.Trainer()\n\ndef evaluate():\n    trainer.test(model, ckpt_path='best')\n"
    assert severities(body) == []
    local = "def evaluate():\n    trainer = L.Trainer()\n    trainer.test(model, ckpt_path='best')\n"
    assert severities(local) == [Severity.ERROR]


def test_configure_callbacks_may_add_a_checkpoint():
    body = "class M(L.LightningModule):\n    def configure_callbacks(self):\n        return [ModelCheckpoint()]\n\n"
    off = "trainer = L.Trainer(enable_checkpointing=False)\ntrainer.fit(M())\ntrainer.test(M(), ckpt_path='best')\n"
    assert severities(body + off) == []
    fast = "trainer = L.Trainer(fast_dev_run=True)\ntrainer.fit(M())\ntrainer.test(M(), ckpt_path='best')\n"
    assert severities(body + fast) == [Severity.ERROR]


def test_an_assigned_fit_counts():
    assert severities("trainer = L.Trainer()\nout = trainer.fit(model)\ntrainer.test(model, ckpt_path='best')\n") == []


def test_lightning_1x_is_not_checked():
    source = (
        HEAD + "trainer = L.Trainer(fast_dev_run=True)\ntrainer.fit(model)\ntrainer.test(model, ckpt_path='best')\n"
    )
    assert Analyzer(Workspace(), [PL005], lightning_version="1.9.5").analyze(source, None) == []


def test_a_trainer_not_known_statically_is_silent_but_a_hint_with_report_unknown():
    body = "from lightning.pytorch.cli import LightningCLI\ncli = LightningCLI(Model, run=False)\ncli.trainer.test(model, ckpt_path='best')\n"
    assert severities(body) == []
    analyzer = Analyzer(Workspace(), [PL005], report_unknown=True)
    (hint,) = [f for f in analyzer.analyze(HEAD + body, None) if f.code == "PL005"]
    assert hint.severity is Severity.HINT and "`cli.trainer` is not known statically" in hint.message
