"""Wording shared by the rules that judge scenarios (FAB004, FAB005): which configurations fail,
and where their values were written."""

from __future__ import annotations

from fabric_lsp.engine.configuration import Scenario
from fabric_lsp.engine.model import Related
from fabric_lsp.engine.semantic import SemanticModel


def describe_failing(failing: tuple[Scenario, ...], limit: int = 2) -> str:
    """``the precision plugin `MixedPrecision` (precision='bf16-mixed' on CPU)``, at most ``limit`` shown."""
    parts: list[str] = []
    for s in failing:
        o = s.outcome
        if o is None:
            continue
        written = s.describe()
        host = " " + o.host.describe()
        written = written[: -len(host)] if written.endswith(host) else written
        part = f"`{o.strategy}` with `{o.precision_plugin}` ({written})"
        if part not in parts:
            parts.append(part)
    shown = " or ".join(parts[:limit])
    if len(parts) > limit:
        shown += f" (and {len(parts) - limit} more)"
    return shown or "the configuration"


def scenario_related(model: SemanticModel, failing: tuple[Scenario, ...]) -> list[Related]:
    out: list[Related] = []
    here = model.path
    for s in failing:
        for name, origin in s.origins:
            if name in ("precision", "strategy", "accelerator", "plugins"):
                r = Related(f"`{name}` chosen here", origin.span, origin.path if origin.path != here else None)
                if r not in out:
                    out.append(r)
    return out
