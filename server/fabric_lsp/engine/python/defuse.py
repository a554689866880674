"""Def-use questions on syntax trees that rewrites ask (rule-free): is a name rebound by a
statement, is a model used only through ``.parameters()``, does a statement leave its block.

Shared by the fixes of FAB001 (separate → joint setup) and FAB009 (joint → separate setup)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import cast

from fabric_lsp.engine.python.astwalk import children, walk
from fabric_lsp.engine.python.modules import FUNC_TYPES

#: Module methods that return the same parameters before and after Fabric wraps the module.
PARAMETER_METHODS = frozenset({"parameters", "named_parameters"})


def same(a: ast.AST, b: ast.AST) -> bool:
    return ast.dump(a) == ast.dump(b)


def load(node: ast.AST) -> ast.AST:
    """``node`` with Load contexts (so a store target compares equal to a read of it)."""
    if isinstance(node, ast.Attribute):
        return ast.Attribute(value=load_expr(node.value), attr=node.attr, ctx=ast.Load())
    if isinstance(node, ast.Name):
        return ast.Name(id=node.id, ctx=ast.Load())
    if isinstance(node, ast.Subscript):
        return ast.Subscript(value=load_expr(node.value), slice=node.slice, ctx=ast.Load())
    return node


def load_expr(node: ast.expr) -> ast.expr:
    return cast(ast.expr, load(node))


def key(node: ast.AST) -> str:
    return ast.dump(load(node))


def is_ref_chain(node: ast.AST) -> bool:
    """``a`` or ``a.b.c``."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def stores(node: ast.AST) -> list[ast.AST]:
    """The targets ``node`` binds or deletes (imports, functions and classes included)."""
    out: list[ast.AST] = []
    for n in walk(node):
        if isinstance(n, (ast.Name, ast.Attribute, ast.Subscript)) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.append(n)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for alias in n.names:
                out.append(ast.Name(id=(alias.asname or alias.name).split(".")[0], ctx=ast.Store()))
        elif isinstance(n, (*FUNC_TYPES, ast.ClassDef)):
            out.append(ast.Name(id=n.name, ctx=ast.Store()))
    return out


def names(node: ast.AST) -> set[str]:
    return {n.id for n in walk(node) if isinstance(n, ast.Name)}


def rebinds(stmt: ast.AST, expr: ast.AST) -> bool:
    """Whether ``stmt`` may rebind ``expr`` (a name or attribute chain) or any name in it."""
    used = names(expr)
    for s in stores(stmt):
        if isinstance(s, ast.Name) and s.id in used:
            return True
        if isinstance(s, (ast.Attribute, ast.Subscript)) and prefix_of(s, expr):
            return True
    return any(isinstance(n, (ast.Global, ast.Nonlocal)) and bool(used & set(n.names)) for n in ast.walk(stmt))


def prefix_of(store: ast.AST, expr: ast.AST) -> bool:
    """``self.model`` stored, ``self.model`` / ``self.model.x`` read: the store changes ``expr``."""
    target = key(store)
    cur: ast.AST = expr
    while True:
        if key(cur) == target:
            return True
        if isinstance(cur, (ast.Attribute, ast.Subscript)):
            cur = cur.value
        else:
            return False


def parameter_uses(
    root: ast.AST, target: ast.AST, parent_of: Callable[[ast.AST], ast.AST | None]
) -> tuple[list[ast.expr], list[ast.expr]]:
    """Loads of ``target`` under ``root``: (uses via ``.parameters()``-like calls, other uses).
    ``parent_of`` gives a node's parent (``ModuleInfo.parent_of``)."""
    wanted = key(target)
    ok: list[ast.expr] = []
    bad: list[ast.expr] = []
    for n in walk(root):
        if isinstance(n, (ast.Name, ast.Attribute)) and isinstance(n.ctx, ast.Load) and key(n) == wanted:
            parent = parent_of(n)
            grand = parent_of(parent) if parent is not None else None
            if (
                isinstance(parent, ast.Attribute)
                and parent.attr in PARAMETER_METHODS
                and isinstance(grand, ast.Call)
                and grand.func is parent
            ):
                ok.append(n)
            else:
                bad.append(n)
    return ok, bad


def leaves_block(stmt: ast.AST) -> ast.stmt | ast.expr | None:
    """A ``return``/``raise``/``break``/``continue``/``yield``/``await`` that may leave ``stmt``'s block."""
    stack = [stmt]
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Return, ast.Raise, ast.Break, ast.Continue, ast.Yield, ast.YieldFrom, ast.Await)):
            return n
        if isinstance(n, (*FUNC_TYPES, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(children(n))
    return None
