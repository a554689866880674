"""Where a rule about a configuration (a ``Fabric(...)``'s, FAB008; a ``Trainer(...)``'s, PL006)
reports it: the argument's value in the call when it is written there, else the call, with the
value's own place for related information."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from fabric_lsp.engine.findings import Span
from fabric_lsp.engine.lightning.configurations import Scenario
from fabric_lsp.engine.python.astwalk import walk
from fabric_lsp.engine.python.values import Origin
from fabric_lsp.engine.semantic.model import SemanticModel


@dataclass(frozen=True)
class Place:
    """Where a finding is reported: the argument's value in the call (or the call), and where the
    value was written when that is elsewhere."""

    argument: str | None
    span: Span
    origin: Origin | None
    node: ast.Constant | None  # the literal at ``span`` when it is one (fixes rewrite it)


def place_of(model: SemanticModel, call: ast.Call, scenario: Scenario, arguments: tuple[str, ...]) -> Place:
    """The first of ``arguments`` the configuration ``scenario`` writes: its value in the call when
    it is written there, else the call (the value's own place goes to related information)."""
    call_span = model.span(call)
    for name in arguments:
        origin = scenario.origin(name)
        if origin is None:
            continue
        if origin.path == model.path and _inside(origin.span, call_span):
            return Place(name, origin.span, None, _node_at(call, model, origin.span))
        keyword = next((k for k in call.keywords if k.arg == name), None)
        if keyword is not None:
            return Place(name, model.span(keyword.value), origin, None)
        return Place(name, call_span, origin, None)
    return Place(None, call_span, None, None)


def _inside(inner: Span, outer: Span) -> bool:
    return outer.start <= inner.start and inner.end <= outer.end


def _node_at(call: ast.Call, model: SemanticModel, span: Span) -> ast.Constant | None:
    for node in walk(call):
        if isinstance(node, ast.Constant) and model.span(node) == span:
            return node
    return None
