"""PL006 (a ``Trainer(...)`` the accelerator connector rejects): where it stays silent, and the 2.x
spelling its message gives for a 1.x value."""

from __future__ import annotations

import textwrap

import pytest
from fabric_lsp.engine import Analyzer, Severity
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import RULES_BY_CODE

PL006 = RULES_BY_CODE["PL006"]


def findings(body: str, version: str | None = None):
    source = "import lightning as L\n" + textwrap.dedent(body)
    return Analyzer(Workspace(), [PL006], lightning_version=version).analyze(source, "train.py")


@pytest.mark.parametrize(
    ("version", "reported"),
    [("2.0.0", True), ("2.6.6", True), ("1.9.5", False), ("1.6.5", False)],  # 1.x took None and "ddp" here
)
def test_only_from_lightning_2(version, reported):
    assert bool(findings('L.Trainer(accelerator="ddp", strategy=None)\n', version)) is reported


def test_a_keyword_init_does_not_take_fails_first():
    # `gpus=` raises TypeError before the connector runs (PL004 reports it)
    assert findings('L.Trainer(gpus=2, accelerator="ddp")\n') == []


def test_a_registered_name_is_excused_but_not_none():
    register = 'from lightning.pytorch.strategies import StrategyRegistry\nStrategyRegistry.register("mine", object)\n'
    assert findings(register + 'L.Trainer(strategy="mine")\n') == []
    (finding,) = findings(register + "L.Trainer(strategy=None)\n")
    assert finding.severity is Severity.ERROR and "strategy='auto'" in finding.message


@pytest.mark.parametrize(
    ("accelerator", "hint"),
    [
        ("ddp", "pass `strategy='ddp'`"),
        ("deepspeed", "pass `strategy='deepspeed'`"),
        ("dp", None),  # DataParallel left in 2.0: no 2.x strategy to name
    ],
)
def test_a_strategy_given_as_the_accelerator(accelerator, hint):
    (finding,) = findings(f'L.Trainer(accelerator="{accelerator}")\n')
    assert "invalid accelerator name" in finding.message
    assert (hint in finding.message) if hint else "pass `strategy=" not in finding.message
