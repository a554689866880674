"""Receivers that inference cannot resolve, but that certainly are not a Fabric of the project.

:func:`not_a_fabric` answers for an expression whose alternatives are (partly) unknown: it is True
only on positive evidence that no Fabric the project builds can be there —

* an object made outside the project: a module imported from outside the workspace (``import
  gradio as gr``), what a call of such a module's function or class returns when none of the
  call's arguments may be a Fabric (``gr.Interface(fn=...)``, ``with gr.Blocks() as demo``,
  ``demo.queue()``), and attributes of those;
* a Lightning strategy's launcher (``facts.LAUNCHER_ATTRIBUTES``: ``strategy.launcher``,
  ``self._launcher``, and a name bound to one, as in Lightning's own ``fabric.py:1119-1120``).

Anything else — a parameter, an attribute of an unknown object, a function of the project whose
return inference did not follow, a builtin — may be a Fabric, and the answer is False.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from fabric_lsp import facts
from fabric_lsp.engine.python.astwalk import walk
from fabric_lsp.engine.python.modules import FUNC_TYPES, ModuleInfo
from fabric_lsp.engine.python.values import Ctx, FabricInst, Instance, QualRef, Unknown, Value

if TYPE_CHECKING:  # pragma: no cover
    from fabric_lsp.engine.program.infer import Inference

#: how deep the look through names, attributes and calls goes
MAX_DEPTH = 6


def not_a_fabric(ev: Inference, module: ModuleInfo, expr: ast.AST, depth: int = 0) -> bool:
    """Whether ``expr`` (evaluated in ``module``) certainly is no Fabric of the project."""
    if depth > MAX_DEPTH:
        return False
    if isinstance(expr, ast.Attribute):
        return expr.attr in facts.LAUNCHER_ATTRIBUTES or not_a_fabric(ev, module, expr.value, depth + 1)
    if isinstance(expr, ast.Call):
        return not_a_fabric(ev, module, expr.func, depth + 1) and not any(
            _may_be_fabric(ev, module, arg, depth + 1) for arg in _arguments(expr)
        )
    if isinstance(expr, ast.Name):
        bindings = _bindings(module, expr)
        return bool(bindings) and all(_binds_no_fabric(ev, module, b, expr.id, depth + 1) for b in bindings)
    return False


def _may_be_fabric(ev: Inference, module: ModuleInfo, expr: ast.AST, depth: int) -> bool:
    values = _values(ev, module, expr)
    if any(isinstance(v, (FabricInst, Instance)) for v in values):
        return True
    return any(isinstance(v, Unknown) for v in values) and not not_a_fabric(ev, module, expr, depth)


def _values(ev: Inference, module: ModuleInfo, expr: ast.AST) -> list[Value]:
    if isinstance(expr, (ast.Constant, ast.Lambda, ast.JoinedStr)):
        return []
    return ev.evaluate(expr, module)


def _arguments(call: ast.Call) -> list[ast.expr]:
    args = [a.value if isinstance(a, ast.Starred) else a for a in call.args]
    return args + [kw.value for kw in call.keywords]


def _bindings(module: ModuleInfo, name: ast.Name) -> list[ast.AST]:
    """The nodes that bind ``name`` in its scope (the module's, when its function binds none)."""
    module.record_lookup(name.id, "binding")  # the verdict depends on the statements that bind it
    scope = module.scope_of(name)
    found = _binders(scope, name.id)
    if not found and scope is not module.tree and module.tree is not None:
        found = _binders(module.tree, name.id)
    return found


def _binders(scope: ast.AST, name: str) -> list[ast.AST]:
    """Parameters, stored names, imports (the statement), definitions and ``global`` declarations."""
    out: list[ast.AST] = []
    if isinstance(scope, (*FUNC_TYPES, ast.Lambda)):
        a = scope.args
        params = (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg)
        out += [p for p in params if p is not None and p.arg == name]
    out += _binders_in(scope).get(name, [])
    return out


def _binders_in(scope: ast.AST) -> dict[str, list[ast.AST]]:
    """Name → the nodes inside ``scope`` that bind it (in walk order), walked once per scope."""
    known: dict[str, list[ast.AST]] | None = getattr(scope, "_fabric_lsp_binders", None)
    if known is None:
        known = {}
        for node in walk(scope):
            for bound in _bound_names(node):
                known.setdefault(bound, []).append(node)
        scope._fabric_lsp_binders = known  # type: ignore[attr-defined]
    return known


def _bound_names(node: ast.AST) -> tuple[str, ...]:
    """The names ``node`` binds: a stored or deleted name, an import's alias, a definition, a
    ``global``/``nonlocal`` declaration."""
    if isinstance(node, ast.Name):
        return (node.id,) if isinstance(node.ctx, (ast.Store, ast.Del)) else ()
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return tuple(dict.fromkeys(a.asname or a.name.split(".")[0] for a in node.names))
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return (node.name,)
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return tuple(dict.fromkeys(node.names))
    return ()


def _alias(stmt: ast.Import | ast.ImportFrom, name: str) -> ast.alias | None:
    return next((a for a in stmt.names if (a.asname or a.name.split(".")[0]) == name), None)


def _binds_no_fabric(ev: Inference, module: ModuleInfo, binder: ast.AST, name: str, depth: int) -> bool:
    if isinstance(binder, (ast.Import, ast.ImportFrom)):
        return _imported_from_outside(ev, module, binder, name)
    value = _bound_value(module, binder)
    return value is not None and not_a_fabric(ev, module, value, depth)


def _bound_value(module: ModuleInfo, target: ast.AST) -> ast.AST | None:
    """The expression a plain ``name = value``, ``(name := value)`` or ``with value as name``
    binds to the name ``target``; None for any other binding (a parameter, a loop, unpacking)."""
    parent = module.parent_of(target)
    if isinstance(parent, ast.Assign) and target in parent.targets:
        return parent.value
    if isinstance(parent, (ast.AnnAssign, ast.NamedExpr)) and parent.target is target:
        return parent.value
    if isinstance(parent, ast.withitem) and parent.optional_vars is target:
        return parent.context_expr
    return None


def _imported_from_outside(ev: Inference, module: ModuleInfo, stmt: ast.Import | ast.ImportFrom, name: str) -> bool:
    """An import of something that is not the project's: it resolves to no module, class or
    function of the workspace (relative imports are the project's)."""
    alias = _alias(stmt, name)
    if alias is None or (isinstance(stmt, ast.ImportFrom) and stmt.level):
        return False
    nothing: list[Value] = []
    values = ev.bounded(lambda: ev.ev_import(stmt, alias, Ctx(module)), nothing)
    return bool(values) and all(_outside(v) for v in values)


def _outside(value: Value) -> bool:
    if isinstance(value, QualRef):  # Lightning's own packages build Fabrics
        return value.qualname.split(".")[0] not in facts.KNOWN_PACKAGES
    return isinstance(value, Unknown)
