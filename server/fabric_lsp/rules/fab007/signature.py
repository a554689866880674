"""What FAB007 needs to know of the function handed to ``launch``: its positional parameters and
whether it certainly returns None."""

from __future__ import annotations

import ast
from typing import NamedTuple

from fabric_lsp.engine.python.astwalk import children
from fabric_lsp.engine.python.modules import FUNC_TYPES
from fabric_lsp.engine.python.values import FuncRef, Value


class Params(NamedTuple):
    name: str
    positional: int  # how many positional arguments it accepts
    required: int  # how many it needs
    star: bool  # *args
    total: int  # every parameter (``inspect.signature(fn).parameters``)


def params(value: Value) -> Params | None:
    """The parameters of a resolved ``def``/lambda (a method looked up on an instance: without
    ``self``)."""
    if not isinstance(value, FuncRef) or not isinstance(value.node, (*FUNC_TYPES, ast.Lambda)):
        return None
    a = value.node.args
    positional = [*a.posonlyargs, *a.args]
    drop = 1 if value.bound_self is not None and positional else 0
    n = len(positional) - drop
    required = max(0, n - len(a.defaults))
    total = n + len(a.kwonlyargs) + (a.vararg is not None) + (a.kwarg is not None)
    name = value.node.name if isinstance(value.node, FUNC_TYPES) else "<lambda>"
    return Params(name, n, required, a.vararg is not None, total)


def returns_none(value: Value) -> bool:
    """Whether calling the resolved ``def`` certainly returns None (no ``return <value>``, no
    ``yield``: a call of it is not a callable)."""
    if not isinstance(value, FuncRef) or not isinstance(value.node, FUNC_TYPES):
        return False
    for node in _own_nodes(value.node):
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
            return False
        if (
            isinstance(node, ast.Return)
            and node.value is not None
            and not (isinstance(node.value, ast.Constant) and node.value.value is None)
        ):
            return False
    return not isinstance(value.node, ast.AsyncFunctionDef) and not value.node.decorator_list


def _own_nodes(func: ast.AST):
    """The nodes of ``func``'s body, not of the functions and classes it defines."""
    stack = list(getattr(func, "body", []))
    while stack:
        node = stack.pop()
        yield node
        for child in children(node):
            if not isinstance(child, (*FUNC_TYPES, ast.Lambda, ast.ClassDef)):
                stack.append(child)
