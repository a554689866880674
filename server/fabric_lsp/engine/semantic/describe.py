"""The configuration model made visible (rule-free): what Lightning makes of a ``Fabric(...)`` or a
``Trainer(...)`` on each configuration the code can choose, for hover and inlay hints.

It reads :class:`~fabric_lsp.engine.lightning.configurations.Scenario` as the semantic model gives it
(:meth:`~fabric_lsp.engine.semantic.model.SemanticModel.scenarios`) and never computes one itself: each
scenario's ``outcome`` says what Lightning resolved (strategy, accelerator, devices, processes,
precision plugin, launcher), ``origins`` and ``labels`` where the values were written.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from typing import Any

from fabric_lsp import facts
from fabric_lsp.engine.findings import Pos
from fabric_lsp.engine.lightning import connector as lightning
from fabric_lsp.engine.lightning.configurations import Scenario
from fabric_lsp.engine.python.values import FabricInst, Origin, TrainerInst
from fabric_lsp.engine.semantic.model import SemanticModel

#: configurations listed in one hover; the rest are counted
MAX_LISTED = 12


@dataclass(frozen=True)
class Hint:
    """An inlay hint: ``label`` shown at ``pos`` (after a ``Fabric(...)`` call), ``tooltip`` in
    Markdown."""

    pos: Pos
    label: str
    tooltip: str


@dataclass(frozen=True)
class Setting:
    """One line of a configuration: what Lightning resolved, and where its value was written
    (``origin`` None: Fabric's default, or derived from the other settings)."""

    name: str
    value: str
    source: str  # how the value reads in the code (`strategy="ddp"`), or "default"
    origin: Origin | None = None


# -- one configuration --------------------------------------------------------------------------


def _written(s: Scenario, *names: str) -> tuple[str, Origin | None]:
    """How the first of ``names`` written for ``s`` reads, and where; ("default", None) if none is."""
    for name in names:
        origin = s.origin(name)
        if origin is not None:
            label = s.label(name) or f"{name}={origin.text}"
            return (label + " (assumed)" if name in s.assumed else label), origin
    return "default", None


def _obj_settings(value: Any) -> str:
    """``DeepSpeedStrategy(stage=3)``: a strategy object's constructor arguments known statically."""
    if not isinstance(value, lightning.Obj):
        return ""
    shown = [
        f"{k}={'?' if v is facts.NOT_KNOWN else repr(v)}" for k, v in value.args if not isinstance(v, lightning.Obj)
    ]
    shown += [f"{k}=?" for k in value.unknown if k != "*" and k not in dict(value.args)]
    return f" ({', '.join(dict.fromkeys(shown))})" if shown else ""


def settings(s: Scenario) -> list[Setting]:
    """The resolved settings of one known scenario (``s.outcome`` without an error)."""
    out = s.outcome
    assert out is not None and s.args is not None
    strategy = f"`{out.strategy}`" + (
        f" (a `{out.strategy_base}`)" if out.strategy_base and out.strategy_base != out.strategy else ""
    )
    processes = f"{out.world_size} process{'es' if out.world_size != 1 else ''}"
    nodes = f" on {out.num_nodes} nodes" if out.num_nodes > 1 else ""
    devices = f"{', '.join(f'`{d}`' for d in out.devices) or 'none'} — {processes}{nodes}"
    precision = f"`{out.precision}` (`{out.precision_plugin}`)" if out.precision_plugin else f"`{out.precision}`"
    launcher = out.launcher.value if out.launcher is not None else "none"
    return [
        Setting("strategy", strategy + _obj_settings(s.args.strategy), *_written(s, "strategy")),
        Setting("accelerator", f"`{out.accelerator}` {out.host.describe()}", *_written(s, "accelerator")),
        Setting("devices", devices, *_written(s, "devices", "num_nodes")),
        Setting("precision", precision, *_written(s, "precision", "plugins")),
        Setting(
            "launcher", launcher, *_written(s, "strategy") if s.origin("strategy") else ("from the strategy", None)
        ),
    ]


def summary(s: Scenario) -> str:
    """One line: ``DDPStrategy · CUDAAccelerator ×2 · 2 processes · bf16-mixed · subprocess script``."""
    out = s.outcome
    if out is None:
        return "not known statically"
    if out.error is not None:
        return f"raises {out.error.type} {out.host.describe()}"
    accelerator = (out.accelerator or "?").replace("Accelerator", "")
    parts = [
        out.strategy or "?",
        f"{accelerator} ×{len(out.devices)}" if len(out.devices) > 1 else accelerator,
        f"{out.world_size} process{'es' if out.world_size != 1 else ''}",
        str(out.precision),
    ]
    if out.launcher is not None and out.launcher is not lightning.Launcher.NONE:
        parts.append(out.launcher.value)
    return " · ".join(parts)


def inlay_label(scenarios: list[Scenario]) -> str:
    """The resolved configuration when there is exactly one, else how many there are."""
    if len(scenarios) == 1:
        return summary(scenarios[0])
    return f"{len(scenarios)} configurations"


# -- Markdown -----------------------------------------------------------------------------------


def _where(origin: Origin | None, document: str | None) -> str:
    if origin is None:
        return ""
    path = origin.path or document
    return f" ({os.path.basename(path) if path else 'this file'}:{origin.span.start.line + 1})"


def _scenario_lines(s: Scenario, document: str | None, built: str = "Fabric") -> list[str]:
    out = s.outcome
    if out is None:
        return [f"   - not known statically: {'; '.join(s.unknown) or 'an argument fabric-lsp cannot follow'}"]
    if out.error is not None:
        written = ", ".join(f"{label}{_where(s.origin(name), document)}" for name, label in s.labels)
        return [
            f"   - `{built}(...)` raises `{out.error.type}`: {out.error.message}",
            f"   - from: {written or 'the defaults'}",
        ]
    return [f"   - {st.name}: {st.value} — {st.source}{_where(st.origin, document)}" for st in settings(s)]


def describe_fabric(fabric: FabricInst | TrainerInst, scenarios: list[Scenario], document: str | None) -> str:
    """Markdown: every configuration of ``fabric`` (or of a Trainer), each setting with where its
    value came from."""
    n = len(scenarios)
    head = f"**`{fabric.class_name}`{_where(fabric.origin, document)}: {n} configuration{'s' if n != 1 else ''}**"
    built = "Trainer" if isinstance(fabric, TrainerInst) else "Fabric"
    lines = [head, ""]
    for i, s in enumerate(scenarios[:MAX_LISTED], 1):
        lines.append(f"{i}. {summary(s)}")
        lines += _scenario_lines(s, document, built)
    if n > MAX_LISTED:
        lines.append(f"\n… and {n - MAX_LISTED} more")
    return "\n".join(lines)


# -- where the cursor is ----------------------------------------------------------------------


def _target(model: SemanticModel, node: ast.AST) -> ast.AST | None:
    """The expression whose Fabric hover describes: a ``Fabric(...)`` construction (the call, or
    the class name in it), a name or attribute chain (``fabric``, ``self.fabric``; the receiver of
    ``fabric.launch``)."""
    constructions = model.fabric_constructions() + model.trainer_constructions()
    parent = model.module.parent_of(node)
    if isinstance(parent, ast.Call) and parent.func is node and parent in constructions:
        return parent
    if node in constructions:
        return node
    if isinstance(node, ast.Attribute) and isinstance(parent, ast.Call) and parent.func is node:
        return node.value if isinstance(node.value, (ast.Name, ast.Attribute)) else None
    if isinstance(getattr(node, "ctx", None), ast.Store):
        return _assigned_value(parent, node)
    return node if isinstance(node, (ast.Name, ast.Attribute)) else None


def _assigned_value(stmt: ast.AST | None, target: ast.AST) -> ast.AST | None:
    """``fabric = Fabric(...)``: the value bound to the target under the cursor (plain targets only)."""
    if isinstance(stmt, ast.Assign) and stmt.targets == [target]:
        return stmt.value
    if isinstance(stmt, (ast.AnnAssign, ast.NamedExpr)) and stmt.target is target:
        return stmt.value
    return None


def hover_at(model: SemanticModel, pos: Pos) -> str | None:
    """Markdown: the configurations of the Fabric(s) under the cursor, or None."""
    node = model.node_at(pos)
    target = _target(model, node) if node is not None else None
    if target is None:
        return None
    # the evaluator's answer only (no jedi look-up: hover asks at every name the cursor rests on)
    fabrics = [v for v in model.values(target) if isinstance(v, FabricInst) and v.args is not None]
    trainers = [v for v in model.values(target) if isinstance(v, TrainerInst) and v.args is not None]
    if not fabrics and not trainers:
        return None
    described = [describe_fabric(f, model.scenarios(f), model.path) for f in fabrics]
    described += [describe_fabric(t, model.trainer_scenarios(t), model.path) for t in trainers]
    return "\n\n".join(described)


def hints(model: SemanticModel) -> list[Hint]:
    """One inlay hint after every ``Fabric(...)`` and ``Trainer(...)`` construction of the document."""
    out: list[Hint] = []
    lines = model.module.lines
    for call in model.fabric_constructions():
        for fabric in model.fabrics(call, by_type=False)[0]:  # one known only by its type is left out
            if fabric.args is None:
                continue
            found = model.scenarios(fabric)
            out.append(Hint(lines.node_end(call), inlay_label(found), describe_fabric(fabric, found, model.path)))
            break
    for call in model.trainer_constructions():
        trainers = [v for v in model.values(call) if isinstance(v, TrainerInst) and v.args is not None]
        if trainers:
            found = [s for t in trainers for s in model.trainer_scenarios(t)]
            out.append(
                Hint(
                    lines.node_end(call),
                    inlay_label(found),
                    "\n\n".join(describe_fabric(t, model.trainer_scenarios(t), model.path) for t in trainers),
                )
            )
    return out
