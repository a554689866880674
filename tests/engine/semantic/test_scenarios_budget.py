"""A Fabric's scenarios are evaluated under a budget of their own: an earlier evaluation's spent
budget (or passed deadline) never decides them, and one that runs out gives an unknown scenario."""

from __future__ import annotations

import ast
import time

from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.python.values import Budget, FabricInst
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.engine.workspace.workspace import Workspace

SOURCE = 'from lightning.fabric import Fabric\nfabric = Fabric(accelerator="cpu", strategy="deepspeed", devices=2)\n'


def _model_and_fabric() -> tuple[SemanticModel, FabricInst]:
    module = ModuleInfo(SOURCE, "/project/train.py")
    model = SemanticModel(module, Workspace())
    assert module.tree is not None
    call = next(n for n in ast.walk(module.tree) if isinstance(n, ast.Call))
    (fabric,) = [v for v in model.values(call) if isinstance(v, FabricInst)]
    return model, fabric


def test_an_expired_budget_left_by_an_earlier_evaluation_does_not_decide_the_scenarios():
    model, fabric = _model_and_fabric()
    fresh = model.scenarios(fabric)
    assert fresh and all(s.outcome is not None for s in fresh)
    model.inference.budget = Budget(steps=10**9, deadline=time.monotonic() - 60)  # spent and past its deadline
    again = model.scenarios(fabric)
    assert [s.outcome for s in again] == [s.outcome for s in fresh]


def test_a_budget_that_runs_out_gives_an_unknown_scenario(monkeypatch):
    model, fabric = _model_and_fabric()
    # an analysis that has not worked the scenarios out yet (the one that built the Fabric has:
    # its strategies are asked where it is built, and answered once per analysis)
    fresh = SemanticModel(model.module, Workspace())
    monkeypatch.setattr("fabric_lsp.engine.python.values.MAX_STEPS", 0)
    (only,) = fresh.scenarios(fabric)
    assert only.outcome is None and only.unknown == ("the evaluator's budget ran out on its arguments",)


def test_the_scenarios_of_one_argument_set_are_worked_out_once_per_analysis(monkeypatch):
    """Building the Fabric asks its strategies (its scenarios); every rule judging a call on it
    asks its scenarios again: one working out per analysis (litgpt: 140 asked, 58 distinct)."""
    from fabric_lsp.engine.lightning import configurations

    worked: list[object] = []
    real = configurations._scenarios_of
    monkeypatch.setattr(
        configurations, "_scenarios_of", lambda ev, args, *rest: worked.append(args) or real(ev, args, *rest)
    )
    model, fabric = _model_and_fabric()
    first = model.scenarios(fabric)
    assert [s.outcome for s in model.scenarios(fabric)] == [s.outcome for s in first]
    assert len(worked) == 1
