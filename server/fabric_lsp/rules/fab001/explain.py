"""FAB001's explanations for hover: which strategy a Fabric has, how sure, and how inference got
there. The same function explains a site's verdict (with the choices narrowed by guards, as the
diagnostic sees them) and any other Fabric expression under the cursor."""

from __future__ import annotations

import ast

from fabric_lsp.engine.findings import Explanation, Located, Pos
from fabric_lsp.engine.python.values import FabricInst, Origin, StrategyChoice
from fabric_lsp.engine.semantic.model import SemanticModel

FABRIC_METHODS = frozenset(
    {
        "setup",
        "setup_module",
        "setup_optimizers",
        "setup_dataloaders",
        "launch",
        "backward",
        "load",
        "save",
        "print",
        "barrier",
        "init_module",
        "strategy",
    }
)


def _located(text: str, origin: Origin | None) -> Located:
    if origin is None:
        return Located(text)
    return Located(text, origin.span, origin.path)


def _headline(choices: list[StrategyChoice | None]) -> str:
    raising = [c for c in choices if c is not None and c.kind is not None and c.kind.raises_on_separated_setup]
    if raising and len(raising) == len(choices):
        return "certainly DeepSpeed/XLA: `setup_optimizers` raises, use joint `setup(model, optimizer)`"
    if raising:
        return "possibly DeepSpeed/XLA: `setup_optimizers` raises on some paths"
    if any(c is None or c.kind is None for c in choices):
        return "not known statically"
    return "no strategy this code can choose requires joint setup"


def explain_choices(fabrics: list[FabricInst], choices: list[StrategyChoice | None]) -> Explanation:
    """``choices``: the strategies that reach the site; None for a receiver that may not be a
    Fabric on every path."""
    items: list[Located] = []
    for c in choices:
        if c is None:
            item = Located("unknown: the object may not be this Fabric on every path")
        else:
            name = c.class_name if c.kind is not None else "unknown"
            item = _located(f"`{name}` — {c.label}", c.origin)
        if item not in items:
            items.append(item)
    steps: tuple[Located, ...] = ()
    for f in fabrics:
        chain = ([f.origin] if f.origin else []) + list(f.via)
        if len(chain) > 1 or (chain and len(fabrics) > 1):
            steps = tuple(_located(o.text, o) for o in chain)
            break
    headline = f"**Lightning `{fabrics[0].class_name}`** — strategy {_headline(choices)}"
    return Explanation(headline, tuple(items), steps)


def _target(model: SemanticModel, node: ast.AST) -> ast.AST:
    parent = model.module.parent_of(node)
    if isinstance(node, ast.Attribute) and node.attr in FABRIC_METHODS:
        return node.value
    if isinstance(parent, ast.Call) and parent.func is node and not isinstance(node, ast.Attribute):
        return parent  # hovering the class name of `Fabric(...)`
    return node


def explain_at(model: SemanticModel, pos: Pos) -> Explanation | None:
    node = model.node_at(pos)
    if node is None:
        return None
    fabrics, unknown = model.fabrics(_target(model, node))
    if not fabrics:
        return None
    choices: list[StrategyChoice | None] = [c for f in fabrics for c in f.choices]
    choices += [None for _ in unknown]
    return explain_choices(fabrics, choices)
