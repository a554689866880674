"""Explanations for hover: which strategy a Fabric has, how sure, and how inference got there."""

from __future__ import annotations

import ast
import os
from typing import Optional

from fabric_lsp.engine.infer import FabricInst, Inference, Origin, Unknown
from fabric_lsp.engine.model import Pos
from fabric_lsp.engine.modules import ModuleInfo

FABRIC_METHODS = frozenset({"setup", "setup_module", "setup_optimizers", "setup_dataloaders", "launch", "backward", "load", "save", "print", "barrier", "init_module", "strategy"})


def node_at(module: ModuleInfo, pos: Pos) -> Optional[ast.AST]:
    """The innermost expression covering ``pos``."""
    best = None
    top = module.top_for_line(pos.line + 1)
    if top is None:
        return None
    for node in ast.walk(top):
        if not isinstance(node, ast.expr) or not hasattr(node, "end_lineno"):
            continue
        start, end = module.lines.node_start(node), module.lines.node_end(node)
        if start <= pos <= end:
            if best is None or (start >= module.lines.node_start(best) and end <= module.lines.node_end(best)):
                best = node
    return best


def _where(origin: Optional[Origin], module: ModuleInfo) -> str:
    if origin is None:
        return ""
    path = origin.path or module.path
    name = os.path.basename(path) if path else "this file"
    return f"{name}:{origin.span.start.line + 1}"


def explain(module: ModuleInfo, inference: Inference, pos: Pos) -> Optional[str]:
    if module.tree is None:
        return None
    node = node_at(module, pos)
    if node is None:
        return None
    parent = module.parents.get(node)
    target = node
    if isinstance(node, ast.Attribute) and node.attr in FABRIC_METHODS:
        target = node.value
    elif isinstance(parent, ast.Call) and parent.func is node and not isinstance(node, ast.Attribute):
        target = parent  # hovering the class name of `Fabric(...)`
    elif isinstance(parent, ast.Attribute) and parent.attr in FABRIC_METHODS and parent.value is node:
        target = node
    values = inference.evaluate(target, module)
    fabrics = [v for v in values if isinstance(v, FabricInst)]
    if not fabrics:
        return None
    choices = [c for f in fabrics for c in f.choices] + [None for v in values if isinstance(v, Unknown)]
    raising = [c for c in choices if c is not None and c.kind is not None and c.kind.raises_on_separated_setup]
    if raising and len(raising) == len(choices):
        verdict = "certainly DeepSpeed/XLA: `setup_optimizers` raises, use joint `setup(model, optimizer)`"
    elif raising:
        verdict = "possibly DeepSpeed/XLA: `setup_optimizers` raises on some paths"
    elif any(c is None or c.kind is None for c in choices):
        verdict = "not known statically"
    else:
        verdict = "no strategy this code can choose requires joint setup"
    lines = [f"**Lightning `{fabrics[0].class_name}`** — strategy {verdict}", ""]
    seen = set()
    for c in choices:
        if c is None:
            text = "- unknown: the object may not be this Fabric on every path"
        else:
            name = c.class_name if c.kind is not None else "unknown"
            where = _where(c.origin, module)
            text = f"- `{name}` — {c.label}" + (f" ({where})" if where else "")
        if text not in seen:
            seen.add(text)
            lines.append(text)
    for f in fabrics:
        steps = [o for o in ([f.origin] if f.origin else []) + list(f.via)]
        if len(steps) > 1 or (steps and len(fabrics) > 1):
            lines += ["", "How fabric-lsp got there:"]
            for i, o in enumerate(steps, 1):
                lines.append(f"{i}. `{o.text}` — {_where(o, module)}")
            break
    return "\n".join(lines)
