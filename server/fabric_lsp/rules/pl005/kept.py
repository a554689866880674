"""Whether a checkpoint callback object built outside ``Trainer(...)`` reaches that one Trainer
only (then no other Trainer can have fitted with it, and its ``best_model_path`` is this one's)."""

from __future__ import annotations

import ast
import os

from fabric_lsp.engine.python.astwalk import walk
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.semantic.model import SemanticModel

_CONTAINERS = (ast.List, ast.Tuple, ast.Set, ast.Starred)
#: ``callbacks.append(ckpt)``: the list now holds it
_ADDERS = frozenset({"append", "extend", "insert"})


def reaches_only(model: SemanticModel, built: ast.Call, trainer: ast.Call) -> bool:
    """``built`` (``ckpt = ModelCheckpoint(...)``) flows only into ``trainer``'s arguments, in the
    same scope, with no loop around ``trainer`` that ``built`` is not in: kept in names of that
    scope, in list/tuple/dict displays and ``.append`` to such names, read otherwise only as
    ``ckpt.<attribute>``. Anything else (a call's argument, a return, an attribute or global
    store, a name another module may import) may hand it to another Trainer."""
    m = model.module
    scope = m.scope_of(built)
    if m.scope_of(trainer) is not scope or m.looped(trainer, scope, around=built):
        return False
    seen: set[str] = set()
    pending: list[ast.expr] = [built]
    while pending:
        names = _held_in(m, pending.pop(), trainer)
        if names is None:
            return False
        for name in names - seen:
            seen.add(name)
            loads = _loads(model, name, scope)
            if loads is None:
                return False
            pending += loads
    return True


def _held_in(m: ModuleInfo, expr: ast.expr, trainer: ast.Call) -> set[str] | None:
    """The names the value of ``expr`` is stored in, going up through displays; None where it
    goes anywhere else than ``trainer``'s arguments or an attribute read."""
    node: ast.AST = expr
    while True:
        parent = m.parent_of(node)
        if isinstance(parent, (*_CONTAINERS, ast.keyword)) or (
            isinstance(parent, ast.Dict) and any(v is node for v in parent.values)
        ):
            node = parent
        elif isinstance(parent, ast.Attribute) and parent.value is node:
            return _method_target(parent)
        elif isinstance(parent, ast.Call):
            return _call_target(parent, node, trainer)
        elif (
            isinstance(parent, ast.Assign)
            and parent.value is node
            and all(isinstance(t, ast.Name) for t in parent.targets)
        ):
            return {t.id for t in parent.targets}  # type: ignore[attr-defined]
        else:
            return None


def _call_target(call: ast.Call, arg: ast.AST, trainer: ast.Call) -> set[str] | None:
    if call is trainer:
        return set()
    func = call.func
    if (
        isinstance(func, ast.Attribute)
        and func.attr in _ADDERS
        and isinstance(func.value, ast.Name)
        and func.value is not arg
    ):
        return {func.value.id}
    return None


def _method_target(attribute: ast.Attribute) -> set[str] | None:
    """``ckpt.<attribute>`` read (``ckpt.best_model_path``, ``callbacks.append(...)``): the object
    goes nowhere; an attribute written (``ckpt.best_model_path = ...``) is not followed."""
    return set() if isinstance(attribute.ctx, ast.Load) else None


def _loads(model: SemanticModel, name: str, scope: ast.AST) -> list[ast.expr] | None:
    """The reads of ``name`` (bound in ``scope``); None where another scope or module may read it."""
    m = model.module
    if isinstance(scope, ast.Module) and _imported(model, name):
        return None
    out: list[ast.expr] = []
    for load in m.loads_of(name):
        if m.scope_of(load) is not scope:
            return None
        out.append(load)
    for node in walk(scope):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return None
    return out


def _imported(model: SemanticModel, name: str) -> bool:
    """Another module may import the module-level ``name``: it mentions the name and imports a
    module named as this one (``from train import ckpt``, ``import train``)."""
    path = model.module.path or ""
    stem = (model.module.name or os.path.splitext(os.path.basename(path))[0]).rsplit(".", 1)[-1]
    for other in model.other_modules_mentioning(name):
        for top in other.tops_with(stem):
            for node in walk(top):
                if isinstance(node, ast.ImportFrom) and (
                    stem in (node.module or "").split(".") or any(a.name == stem for a in node.names)
                ):
                    return True
                if isinstance(node, ast.Import) and any(stem in a.name.split(".") for a in node.names):
                    return True
    return False
