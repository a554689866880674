"""Wording shared by the rules that judge scenarios (FAB002, FAB004, FAB005, FAB007 …): which
configurations fail, and where their values were written."""

from __future__ import annotations

from collections.abc import Sequence

from fabric_lsp import facts
from fabric_lsp.engine.findings import Located, Related
from fabric_lsp.engine.lightning.configurations import Scenario
from fabric_lsp.engine.python.values import FabricInst
from fabric_lsp.engine.semantic.model import SemanticModel


def describe_failing(failing: tuple[Scenario, ...], limit: int = 2) -> str:
    """``the precision plugin `MixedPrecision` (precision='bf16-mixed' on CPU)``, at most ``limit`` shown."""
    return _listed(
        failing,
        limit,
        "the configuration",
        lambda s, written: f"`{s.outcome.strategy}` with `{s.outcome.precision_plugin}` ({written})",
    )


def describe_strategies(failing: Sequence[Scenario], limit: int = 2, fallback: str = "the strategy") -> str:
    """```FSDPStrategy` (strategy="fsdp", devices=2)``: each failing strategy with the values written
    for it (the machine left out), at most ``limit`` shown."""
    return _listed(failing, limit, fallback, lambda s, written: f"`{s.outcome.strategy}` ({written})")


def _listed(failing: Sequence[Scenario], limit: int, fallback: str, part_of) -> str:
    """Each scenario's ``part_of(scenario, its written values without the machine)``, distinct, at
    most ``limit`` of them joined by "or"."""
    parts: list[str] = []
    for s in failing:
        if s.outcome is None:
            continue
        written = s.describe()
        host = " " + s.outcome.host.describe()
        written = written[: -len(host)] if written.endswith(host) else written
        part = part_of(s, written)
        if part not in parts:
            parts.append(part)
    shown = " or ".join(parts[:limit])
    if len(parts) > limit:
        shown += f" (and {len(parts) - limit} more)"
    return shown or fallback


def fabric_lines(model: SemanticModel, fabrics: list[FabricInst]) -> tuple[list[Located], tuple[Located, ...]]:
    """Hover lines for where each Fabric was created, and the steps inference took from the first
    Fabric's ``Fabric(...)`` call to the expression (assignments, calls, parameters)."""
    here = model.path
    items: list[Located] = []
    steps: tuple[Located, ...] = ()
    for f in fabrics:
        if f.origin is not None:
            items.append(
                Located(
                    f"`{f.class_name}` created here", f.origin.span, f.origin.path if f.origin.path != here else None
                )
            )
        chain = ([f.origin] if f.origin else []) + list(f.via)
        if len(chain) > 1 and not steps:
            steps = tuple(Located(o.text, o.span, o.path if o.path != here else None) for o in chain)
    return items, steps


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


def process_related(model: SemanticModel, failing: Sequence[Scenario], fabrics: list[FabricInst]) -> list[Related]:
    """Where the failing scenarios' process count was written (only the arguments that decide it,
    ``facts.PROCESS_ARGUMENTS``) and where each Fabric was created."""
    here = model.path
    out: list[Related] = []
    for s in failing:
        for name, origin in s.origins:
            if name in facts.PROCESS_ARGUMENTS:
                out.append(Related(f"`{name}` chosen here", origin.span, origin.path if origin.path != here else None))
    for f in fabrics:
        if f.origin is not None:
            out.append(
                Related(f"{f.class_name} created here", f.origin.span, f.origin.path if f.origin.path != here else None)
            )
    return list(dict.fromkeys(out))
