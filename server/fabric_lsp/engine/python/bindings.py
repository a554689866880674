"""What a statement binds: the reaching-definitions vocabulary of the evaluator."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass

from fabric_lsp.engine.python.astwalk import block_children
from fabric_lsp.engine.python.modules import FUNC_TYPES


# A binding of a name: what kind of statement binds it, and the node.
@dataclass(frozen=True)
class Binding:
    kind: str  # assign | import | def | class | param | unknown
    node: ast.AST
    target: ast.AST | None = None
    value: ast.AST | None = None
    #: tests the value must pass to reach the use, as the value of this name (the walk from the
    #: use passed ``if x is None: x = 1`` or ``if x > 1: raise``): (test, wanted outcome)
    narrow: tuple = ()


def binds(target: ast.AST, name: str) -> bool:
    if isinstance(target, ast.Name):
        return target.id == name
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(binds(t, name) for t in target.elts)
    if isinstance(target, ast.Starred):
        return binds(target.value, name)
    return False


def match_target(target: ast.AST, value: ast.AST, name: str) -> ast.AST | None:
    """For ``a, b = x, y`` return the value expression bound to ``name`` (None if unknowable)."""
    if isinstance(target, ast.Name):
        return value if target.id == name else None
    if (
        isinstance(target, (ast.Tuple, ast.List))
        and isinstance(value, (ast.Tuple, ast.List))
        and len(target.elts) == len(value.elts)
        and not any(isinstance(t, ast.Starred) for t in target.elts)
    ):
        for t, v in zip(target.elts, value.elts):
            found = match_target(t, v, name)
            if found is not None:
                return found
    return None


Found = tuple[list[Binding], bool]
_NONE: Found = ([], False)


def _assign(stmt: ast.Assign, name: str) -> Found:
    for target in reversed(stmt.targets):
        if binds(target, name):
            matched = match_target(target, stmt.value, name)
            if matched is not None:
                return [Binding("assign", stmt, target, matched)], True
            if _plain_unpacking(target, name):  # a, b = f(): the item at name's place
                return [Binding("unpack", stmt, target, stmt.value)], True
            return [Binding("unknown", stmt, target)], True
    return _NONE


def _plain_unpacking(target: ast.AST, name: str) -> bool:
    return (
        isinstance(target, (ast.Tuple, ast.List))
        and all(isinstance(t, ast.Name) for t in target.elts)
        and any(t.id == name for t in target.elts)
    )


def _ann_assign(stmt: ast.AnnAssign, name: str) -> Found:
    if not binds(stmt.target, name):
        return _NONE
    if stmt.value is not None:
        return [Binding("assign", stmt, stmt.target, stmt.value)], True
    return [Binding("annotation", stmt, stmt.target)], False


def _aug_assign(stmt: ast.AugAssign, name: str) -> Found:
    return ([Binding("unknown", stmt, stmt.target)], True) if binds(stmt.target, name) else _NONE


def _import(stmt: ast.Import | ast.ImportFrom, name: str) -> Found:
    for alias in reversed(stmt.names):
        if alias.name != "*" and (alias.asname or alias.name.split(".")[0]) == name:
            return [Binding("import", stmt, value=alias)], True
    return _NONE


def _definition(stmt: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, name: str) -> Found:
    if stmt.name != name:
        return _NONE
    return [Binding("class" if isinstance(stmt, ast.ClassDef) else "def", stmt)], True


def _if(stmt: ast.If, name: str) -> Found:
    a, da = block_bindings(stmt.body, name)
    b, db = block_bindings(stmt.orelse, name)
    return a + b, bool(stmt.orelse) and da and db


def _loop(stmt: ast.For | ast.AsyncFor | ast.While, name: str) -> Found:
    found: list[Binding] = []
    if isinstance(stmt, (ast.For, ast.AsyncFor)) and binds(stmt.target, name):
        kind = "for" if isinstance(stmt.target, ast.Name) else "unknown"
        found.append(Binding(kind, stmt, stmt.target, stmt.iter if kind == "for" else None))
    return found + block_bindings(stmt.body, name)[0] + block_bindings(stmt.orelse, name)[0], False


def _with(stmt: ast.With | ast.AsyncWith, name: str) -> Found:
    found = [
        Binding("unknown", stmt, i.optional_vars)
        for i in stmt.items
        if i.optional_vars is not None and binds(i.optional_vars, name)
    ]
    a, da = block_bindings(stmt.body, name)
    return a + found, da or bool(found)


def _try(stmt: ast.AST, name: str) -> Found:
    a, da = block_bindings(stmt.body, name)
    handlers = [block_bindings(h.body, name) for h in stmt.handlers]
    c, dc = block_bindings(stmt.orelse, name)
    f, df = block_bindings(stmt.finalbody, name)
    found = a + c + [b for hs, _ in handlers for b in hs] + f
    return found, df or ((da or dc) and all(d for _, d in handlers))


def _match(stmt: ast.AST, name: str) -> Found:
    return [b for case in stmt.cases for b in block_bindings(case.body, name)[0]], False


#: statement type name → what it may bind
_BY_TYPE = {
    "Assign": _assign,
    "AnnAssign": _ann_assign,
    "AugAssign": _aug_assign,
    "Import": _import,
    "ImportFrom": _import,
    "FunctionDef": _definition,
    "AsyncFunctionDef": _definition,
    "ClassDef": _definition,
    "If": _if,
    "For": _loop,
    "AsyncFor": _loop,
    "While": _loop,
    "With": _with,
    "AsyncWith": _with,
    "Try": _try,
    "TryStar": _try,
    "Match": _match,
}


def stmt_bindings(stmt: ast.stmt, name: str) -> Found:
    """The bindings of ``name`` that ``stmt`` may make, and whether it surely makes one."""
    handler = _BY_TYPE.get(type(stmt).__name__)
    return handler(stmt, name) if handler is not None else _NONE  # type: ignore[operator]


def block_bindings(block: list, name: str) -> tuple[list[Binding], bool]:
    found: list[Binding] = []
    for stmt in reversed(block):
        b, definite = stmt_bindings(stmt, name)
        found.extend(b)
        if definite:
            return found, True
    return found, False


MISSING = object()


def forwarded_to(func: ast.AST) -> str | None:
    """For ``def __getattr__(self, name): return getattr(self.fabric, name)`` the attribute every
    name is forwarded to (``"fabric"``); None for any other body. A docstring and ``if`` tests
    that always raise or return (``if name.startswith("_"): raise AttributeError(name)``) may
    come first."""
    args = getattr(func, "args", None)
    params = [*args.posonlyargs, *args.args] if args is not None else []
    body = list(getattr(func, "body", []))
    if len(params) != 2 or not body:
        return None
    last = body[-1]
    if not all(_docstring_or_guard(stmt) for stmt in body[:-1]) or not isinstance(last, ast.Return):
        return None
    call = last.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "getattr"):
        return None
    if len(call.args) not in (2, 3) or call.keywords:
        return None
    target, name = call.args[0], call.args[1]
    on_self = (
        isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == params[0].arg
    )
    if on_self and isinstance(name, ast.Name) and name.id == params[1].arg:
        return target.attr
    return None


def _docstring_or_guard(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return True
    return isinstance(stmt, ast.If) and not stmt.orelse and isinstance(stmt.body[-1], (ast.Raise, ast.Return))


def attr_target_value(target: ast.AST, value: ast.AST, self_name: str, attr: str):
    """The value assigned to ``self.attr`` by ``target = value``; MISSING if not assigned,
    None if unpacked from something unknowable."""
    if isinstance(target, ast.Attribute):
        if target.attr == attr and isinstance(target.value, ast.Name) and target.value.id == self_name:
            return value
        return MISSING
    if isinstance(target, (ast.Tuple, ast.List)):
        for i, t in enumerate(target.elts):
            if attr_target_value(t, value, self_name, attr) is not MISSING:
                if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                    return attr_target_value(t, value.elts[i], self_name, attr)
                return None
    return MISSING


def returns_of(func: ast.AST) -> Iterable[ast.Return]:
    """The ``return`` statements of ``func``'s own body (not of nested functions or classes), in
    the order of a walk from its last statement back (statements only: none is in an expression)."""
    stack = list(func.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            yield node
        if isinstance(node, (*FUNC_TYPES, ast.ClassDef)):
            continue
        stack.extend(block_children(node))
