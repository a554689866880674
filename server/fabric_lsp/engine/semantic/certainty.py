"""The certainty model, one for every rule that asks "does Lightning fail here?".

Each Fabric an expression may be has scenarios (:mod:`fabric_lsp.engine.lightning.configurations`).
A rule says which scenarios fail (``fails``: True, False, or None where the scenario's facts do
not say). The judgement is

* **certain** when every scenario is known and fails, and the receiver is certainly a Fabric;
* **possible** when a known scenario the code can choose fails;
* **unknown** when none fails but some scenario is not known;
* nothing otherwise.

Scenarios whose ``Fabric(...)`` itself raises do not count: the code never gets here. Scenarios
that differ only in values assumed for arguments not known (``Scenario.group``) count as known
when ``fails`` gives them all the same answer, and as unknown when the answer depends on the
assumption. An unknown scenario, or a receiver that may not be a Fabric, never makes a finding
certain.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable

from fabric_lsp.engine.findings import Certainty
from fabric_lsp.engine.lightning.configurations import Scenario
from fabric_lsp.engine.lightning.connector import Outcome
from fabric_lsp.engine.program.guards import Narrower
from fabric_lsp.engine.program.infer import Inference
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.python.values import FabricInst, Origin
from fabric_lsp.facts import Kind

if TYPE_CHECKING:
    from fabric_lsp.engine.semantic.model import SemanticModel

Fails = Callable[[Scenario], "bool | None"]


@dataclass(frozen=True)
class Judgement:
    certainty: Certainty | None = None
    failing: tuple[Scenario, ...] = ()
    unknown: tuple[Scenario, ...] = ()
    passing: tuple[Scenario, ...] = ()

    @property
    def failure(self) -> Certainty | None:
        """CERTAIN or POSSIBLE where a scenario fails; None otherwise (unknown included)."""
        return self.certainty if self.certainty in (Certainty.CERTAIN, Certainty.POSSIBLE) else None

    def why_unknown(self, default: str) -> str:
        """Why the unknown scenarios are not known, each reason once (``default`` for none)."""
        return "; ".join(dict.fromkeys(u for s in self.unknown for u in s.unknown)) or default

    def at_most_possible(self) -> Judgement:
        """This judgement where something outside the scenarios (a condition the model cannot
        decide, a check that applies only sometimes) makes a certain failure possible only."""
        return replace(self, certainty=Certainty.POSSIBLE) if self.certainty is Certainty.CERTAIN else self


def judge(scenarios: Iterable[Scenario], fails: Fails, unknown_receivers: int = 0) -> Judgement:
    """Sort ``scenarios`` by ``fails``; ``unknown_receivers``: alternatives of the receiver that
    are not known to be a Fabric."""
    failing: list[Scenario] = []
    passing: list[Scenario] = []
    unknown: list[Scenario] = []
    groups: dict[tuple, list[Scenario]] = {}
    for s in scenarios:
        if s.outcome is None:
            unknown.append(s)
        elif s.outcome.error is None:  # a scenario whose Fabric(...) raises never gets here
            groups.setdefault(s.group, []).append(s)
    for group in groups.values():
        answers = {fails(s) for s in group}
        if len(answers) > 1 or answers == {None}:
            unknown += group
        elif answers == {True}:
            failing += group
        else:
            passing += group
    return Judgement(
        _certainty(failing, passing, unknown, unknown_receivers), tuple(failing), tuple(unknown), tuple(passing)
    )


def _certainty(failing: list, passing: list, unknown: list, unknown_receivers: int) -> Certainty | None:
    if failing:
        return Certainty.POSSIBLE if passing or unknown or unknown_receivers else Certainty.CERTAIN
    return Certainty.UNKNOWN if unknown else None


def judge_fabrics(model: SemanticModel, fabrics: list[FabricInst], unknown_receivers: int, fails: Fails) -> Judgement:
    """:func:`judge` over the scenarios of ``fabrics``."""
    return judge((s for fabric in fabrics for s in model.scenarios(fabric)), fails, unknown_receivers)


@dataclass(frozen=True)
class _ScenarioChoice:
    """A scenario seen as the strategy choice the guards narrow (``engine/program/guards.py``)."""

    scenario: Scenario
    kind: Kind | None
    class_name: str
    label: str
    origin: Origin | None


def narrow_scenarios(
    module: ModuleInfo, inference: Inference, receiver: ast.AST, call: ast.AST, scenarios: list[Scenario]
) -> list[Scenario]:
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


def by_outcome(fails: Callable[[Outcome], bool]) -> Fails:
    """A rule that judges Lightning's outcome alone (a known scenario's)."""
    return lambda s: fails(s.outcome)  # type: ignore[arg-type]
