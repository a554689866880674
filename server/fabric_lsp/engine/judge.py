"""The certainty model over scenarios, for rules that ask "does Lightning fail for this Fabric?":
an error where every scenario fails (and all are known), a warning where a known scenario the
code can choose fails, an unknown where none fails but some scenario is not known. Scenarios in
which ``Fabric(...)`` itself raises are left out: the call the rule judges is never reached."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from fabric_lsp.engine.configuration import Scenario
from fabric_lsp.engine.model import Certainty


@dataclass(frozen=True)
class Judgement:
    certainty: Optional[Certainty]  # None: no scenario fails and none is unknown
    failing: tuple[Scenario, ...] = ()
    unknown: tuple[Scenario, ...] = ()


def judge(scenarios: list[Scenario], fails: Callable[[Scenario], Optional[bool]]) -> Judgement:
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
        certainty: Optional[Certainty] = Certainty.CERTAIN
    elif failing:
        certainty = Certainty.POSSIBLE
    elif unknown:
        certainty = Certainty.UNKNOWN
    else:
        certainty = None
    return Judgement(certainty, tuple(failing), tuple(unknown))
