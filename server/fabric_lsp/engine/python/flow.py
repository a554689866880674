"""Which tests hold whenever a node runs, within its function (or module).

A node runs only when every enclosing ``if`` test has the branch's truth value (also the branches
of a conditional expression and the operands before it in an ``and``/``or``), and when every earlier
``if`` in an enclosing block whose branch always leaves the block (``return``, ``raise``,
``continue``, ``break``) did not take that branch; ``assert`` adds its test. The walk stops at the
enclosing function, class or lambda: what holds at a function's call sites is the caller's business.

Pure functions over a :class:`~fabric_lsp.engine.python.modules.ModuleInfo`; rules and engine questions
(:mod:`fabric_lsp.engine.program.guards`, :mod:`fabric_lsp.engine.program.ranks`) build on it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import NamedTuple

from fabric_lsp.engine.python.modules import FUNC_TYPES, ModuleInfo

LEAVES = (ast.Return, ast.Raise, ast.Continue, ast.Break)
_BOUNDARIES = (ast.Module, *FUNC_TYPES, ast.ClassDef, ast.Lambda)


class Condition(NamedTuple):
    """``test`` has truth value ``truth`` whenever the node runs; ``holder`` is the statement or
    expression that makes it so (the ``if``, the early exit, the ``assert``, the ``IfExp`` …)."""

    test: ast.expr
    truth: bool
    holder: ast.AST
    #: "branch" (inside the ``if``), "exit" (after an early exit), "assert" or "expression"
    how: str


def ends_process(stmt: ast.stmt) -> bool:
    """``sys.exit(...)``, ``exit()``, ``quit()``, ``os._exit(...)``: the process ends here."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    func = stmt.value.func
    if isinstance(func, ast.Name):
        return func.id in ("exit", "quit")
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and (func.value.id, func.attr) in (("sys", "exit"), ("os", "_exit"))
    )


def always_leaves(block: list) -> bool:
    """Whether running ``block`` always leaves the enclosing block."""
    if not block:
        return False
    last = block[-1]
    if isinstance(last, LEAVES) or ends_process(last):
        return True
    if isinstance(last, ast.If):
        return always_leaves(last.body) and always_leaves(last.orelse)
    return False


def expression_conditions(module: ModuleInfo, node: ast.AST, stmt: ast.stmt | None) -> Iterator[Condition]:
    """Conditions from conditional expressions and short-circuit operators around ``node`` inside its
    statement ``stmt`` (the first of :func:`conditions_at`)."""
    child = node
    parent = module.parent_of(child)
    while parent is not None and parent is not stmt and not isinstance(parent, _BOUNDARIES):
        if isinstance(parent, ast.IfExp) and child is not parent.test:
            yield Condition(parent.test, child is parent.body, parent, "expression")
        elif isinstance(parent, ast.BoolOp):
            truth = isinstance(parent.op, ast.And)
            for value in parent.values:
                if value is child:
                    break
                yield Condition(value, truth, parent, "expression")
        child, parent = parent, module.parent_of(parent)


def _earlier_exits(block: list, idx: int) -> Iterator[Condition]:
    for prev in reversed(block[:idx]):
        if isinstance(prev, ast.If):
            if always_leaves(prev.body) and not always_leaves(prev.orelse):
                yield Condition(prev.test, False, prev, "exit")
            elif always_leaves(prev.orelse) and not always_leaves(prev.body):
                yield Condition(prev.test, True, prev, "exit")
        elif isinstance(prev, ast.Assert):
            yield Condition(prev.test, True, prev, "assert")


def conditions_at(module: ModuleInfo, node: ast.AST) -> Iterator[Condition]:
    """The conditions that hold whenever ``node`` runs, innermost first."""
    stmt = module.stmt_of(node)
    yield from expression_conditions(module, node, stmt)
    child: ast.AST | None = stmt
    while child is not None:
        here, child = conditions_here(module, child)
        yield from here


def conditions_here(module: ModuleInfo, stmt: ast.AST) -> tuple[list[Condition], ast.AST | None]:
    """The rest of :func:`conditions_at`, one level at a time: the conditions the statement
    ``stmt`` is reached under in its own block (the early exits before it, then the test of the
    ``if`` holding the block), innermost first, and the statement holding that block (None at
    a function's or a class's boundary)."""
    parent, block, idx = module.block_of(stmt)
    here = list(_earlier_exits(block, idx)) if idx >= 0 else []
    if parent is None or isinstance(parent, _BOUNDARIES):
        return here, None
    if isinstance(parent, ast.If):
        here.append(Condition(parent.test, any(stmt is s for s in parent.body), parent, "branch"))
    if isinstance(parent, ast.ExceptHandler):
        parent = module.parent_of(parent)
    return here, parent


def conditions(module: ModuleInfo, node: ast.AST) -> Iterator[tuple[ast.AST, bool]]:
    """(test, truth) pairs that hold whenever ``node`` runs (statement-level guards only)."""
    for c in conditions_at(module, node):
        if c.how != "expression":
            yield c.test, c.truth


def enclosing_function(module: ModuleInfo, node: ast.AST) -> ast.AST | None:
    """The innermost ``def`` (or lambda) holding ``node``; None at module level or in a class body."""
    cur = module.parent_of(node)
    while cur is not None:
        if isinstance(cur, (*FUNC_TYPES, ast.Lambda)):
            return cur
        if isinstance(cur, ast.ClassDef):
            return None
        cur = module.parent_of(cur)
    return None


def enclosing_withs(module: ModuleInfo, node: ast.AST) -> Iterator[ast.withitem]:
    """The ``with`` items whose body holds ``node``, innermost first, within its function."""
    child, parent = node, module.parent_of(node)
    while parent is not None and not isinstance(parent, _BOUNDARIES):
        if isinstance(parent, (ast.With, ast.AsyncWith)) and any(child is s for s in parent.body):
            yield from parent.items
        child, parent = parent, module.parent_of(parent)
