"""The certainty model over scenarios, for rules that ask "does Lightning fail for this Fabric?":
an error where every scenario fails (and all are known), a warning where a known scenario the
code can choose fails, an unknown where none fails but some scenario is not known. Scenarios in
which ``Fabric(...)`` itself raises are left out: the call the rule judges is never reached."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable

from fabric_lsp.engine.findings import Certainty
from fabric_lsp.engine.lightning.configurations import Scenario
from fabric_lsp.engine.program.guards import Narrower
from fabric_lsp.engine.program.infer import Inference
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.python.values import Origin
from fabric_lsp.facts import Kind


@dataclass(frozen=True)
class Judgement:
    certainty: Certainty | None  # None: no scenario fails and none is unknown
    failing: tuple[Scenario, ...] = ()
    unknown: tuple[Scenario, ...] = ()


def judge(scenarios: list[Scenario], fails: Callable[[Scenario], bool | None]) -> Judgement:
    """``fails(scenario)``: True when Lightning fails there, False when it does not, None when
    this scenario's facts do not say (an unknown)."""
    failing: list[Scenario] = []
    unknown: list[Scenario] = []
    passing = 0
    for s in scenarios:
        if s.outcome is not None and s.outcome.error is not None:
            continue
        verdict = fails(s) if s.known else None
        if verdict is None:
            unknown.append(s)
        elif verdict:
            failing.append(s)
        else:
            passing += 1
    if failing and not unknown and not passing:
        certainty: Certainty | None = Certainty.CERTAIN
    elif failing:
        certainty = Certainty.POSSIBLE
    elif unknown:
        certainty = Certainty.UNKNOWN
    else:
        certainty = None
    return Judgement(certainty, tuple(failing), tuple(unknown))


@dataclass(frozen=True)
class _ScenarioChoice:
    """A scenario seen as the strategy choice the guards narrow (``engine/program/guards.py``)."""

    scenario: Scenario
    kind: Kind | None
    class_name: str
    label: str
    origin: Origin | None


def narrow_scenarios(module: ModuleInfo, inference: Inference, receiver: ast.AST, call: ast.AST, scenarios: list[Scenario]) -> list[Scenario]:
    """The scenarios that can reach ``call`` past the guards around it that test ``receiver``'s
    strategy (``isinstance(fabric.strategy, DeepSpeedStrategy)``, comparisons of the value the
    strategy was chosen from …), as FAB001's choices are narrowed."""
    choices = [
        _ScenarioChoice(
            s,
            s.outcome.kind if s.outcome is not None else None,
            (s.outcome.strategy or "?") if s.outcome is not None else "?",
            s.describe(),
            s.origin("strategy"),
        )
        for s in scenarios
    ]
    kept: list = Narrower(module, inference, receiver).narrow(call, choices)  # type: ignore[arg-type]
    return [c.scenario for c in kept]
