"""The certainty model over scenarios, shared by the rules that ask "does Lightning fail here?".

Each Fabric an expression may be has scenarios (:mod:`fabric_lsp.engine.lightning.configurations`). A rule
says which known outcomes fail; the judgement is **certain** when every scenario is known and
fails (scenarios whose ``Fabric(...)`` itself raises do not count: the code never gets here),
**possible** when a known scenario the code can choose fails, and nothing otherwise — an unknown
scenario (or a receiver that may not be a Fabric) never makes a finding certain.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from fabric_lsp.engine.findings import Certainty
from fabric_lsp.engine.lightning.configurations import Scenario
from fabric_lsp.engine.lightning.connector import Outcome
from fabric_lsp.engine.python.values import FabricInst

if TYPE_CHECKING:
    from fabric_lsp.engine.semantic.model import SemanticModel


@dataclass
class Judgement:
    failing: list[Scenario] = field(default_factory=list)
    passing: list[Scenario] = field(default_factory=list)
    unknown: list[Scenario] = field(default_factory=list)
    #: alternatives of the receiver that are not known to be a Fabric
    unknown_receivers: int = 0

    @property
    def certainty(self) -> Certainty | None:
        if not self.failing:
            return None
        if self.passing or self.unknown or self.unknown_receivers:
            return Certainty.POSSIBLE
        return Certainty.CERTAIN


def judge(
    model: SemanticModel, fabrics: list[FabricInst], unknown_receivers: int, fails: Callable[[Outcome], bool]
) -> Judgement:
    """Sort the scenarios of ``fabrics`` by whether ``fails`` holds for their outcome (see
    :func:`judge_scenarios`)."""
    return judge_scenarios(model, fabrics, unknown_receivers, lambda s: fails(s.outcome))  # type: ignore[arg-type]


def judge_scenarios(
    model: SemanticModel,
    fabrics: list[FabricInst],
    unknown_receivers: int,
    fails: Callable[[Scenario], bool | None],
) -> Judgement:
    """Sort the scenarios of ``fabrics`` by whether ``fails`` holds for them (None: this scenario's
    facts do not say, an unknown). Scenarios that differ only in values assumed for arguments not
    known (``Scenario.group``) count as known when ``fails`` gives them all the same answer, and as
    unknown when the answer depends on the assumption."""
    out = Judgement(unknown_receivers=unknown_receivers)
    groups: dict[tuple, list[Scenario]] = {}
    for fabric in fabrics:
        for s in model.scenarios(fabric):
            if s.outcome is None:
                out.unknown.append(s)
            elif s.outcome.error is None:  # a scenario whose Fabric(...) raises never gets here
                groups.setdefault(s.group, []).append(s)
    for group in groups.values():
        answers = {fails(s) for s in group}
        if len(answers) > 1 or answers == {None}:
            out.unknown += group
        elif answers == {True}:
            out.failing += group
        else:
            out.passing += group
    return out
