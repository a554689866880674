"""What a statement binds: the reaching-definitions vocabulary of the evaluator."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Optional

from fabric_lsp.engine.modules import FUNC_TYPES

# A binding of a name: what kind of statement binds it, and the node.
@dataclass(frozen=True)
class Binding:
    kind: str  # assign | import | def | class | param | unknown
    node: ast.AST
    target: Optional[ast.AST] = None
    value: Optional[ast.AST] = None


def binds(target: ast.AST, name: str) -> bool:
    if isinstance(target, ast.Name):
        return target.id == name
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(binds(t, name) for t in target.elts)
    if isinstance(target, ast.Starred):
        return binds(target.value, name)
    return False


def match_target(target: ast.AST, value: ast.AST, name: str) -> Optional[ast.AST]:
    """For ``a, b = x, y`` return the value expression bound to ``name`` (None if unknowable)."""
    if isinstance(target, ast.Name):
        return value if target.id == name else None
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)):
        if len(target.elts) == len(value.elts) and not any(isinstance(t, ast.Starred) for t in target.elts):
            for t, v in zip(target.elts, value.elts):
                found = match_target(t, v, name)
                if found is not None:
                    return found
    return None


def stmt_bindings(stmt: ast.stmt, name: str) -> tuple[list[Binding], bool]:
    """The bindings of ``name`` that ``stmt`` may make, and whether it surely makes one."""
    if isinstance(stmt, ast.Assign):
        for target in reversed(stmt.targets):
            if binds(target, name):
                matched = match_target(target, stmt.value, name)
                if matched is not None:
                    return [Binding("assign", stmt, target, matched)], True
                return [Binding("unknown", stmt, target)], True
        return [], False
    if isinstance(stmt, ast.AnnAssign):
        if binds(stmt.target, name):
            if stmt.value is not None:
                return [Binding("assign", stmt, stmt.target, stmt.value)], True
            return [Binding("annotation", stmt, stmt.target)], False
        return [], False
    if isinstance(stmt, ast.AugAssign):
        if binds(stmt.target, name):
            return [Binding("unknown", stmt, stmt.target)], True
        return [], False
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        for alias in reversed(stmt.names):
            bound = alias.asname or alias.name.split(".")[0]
            if alias.name == "*":
                continue
            if bound == name:
                return [Binding("import", stmt, value=alias)], True
        return [], False
    if isinstance(stmt, (*FUNC_TYPES, ast.ClassDef)):
        if stmt.name == name:
            return [Binding("class" if isinstance(stmt, ast.ClassDef) else "def", stmt)], True
        return [], False
    if isinstance(stmt, ast.If):
        a, da = block_bindings(stmt.body, name)
        b, db = block_bindings(stmt.orelse, name)
        return a + b, bool(stmt.orelse) and da and db
    if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
        found: list[Binding] = []
        if isinstance(stmt, (ast.For, ast.AsyncFor)) and binds(stmt.target, name):
            if isinstance(stmt.target, ast.Name):
                found.append(Binding("for", stmt, stmt.target, stmt.iter))
            else:
                found.append(Binding("unknown", stmt, stmt.target))
        a, _ = block_bindings(stmt.body, name)
        b, _ = block_bindings(stmt.orelse, name)
        return found + a + b, False
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        found = [Binding("unknown", stmt, i.optional_vars) for i in stmt.items if i.optional_vars is not None and binds(i.optional_vars, name)]
        a, da = block_bindings(stmt.body, name)
        return a + found, da or bool(found)
    if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
        a, da = block_bindings(stmt.body, name)
        handlers = [block_bindings(h.body, name) for h in stmt.handlers]
        c, dc = block_bindings(stmt.orelse, name)
        f, df = block_bindings(stmt.finalbody, name)
        found = a + c + [b for hs, _ in handlers for b in hs] + f
        definite = df or ((da or dc) and all(d for _, d in handlers))
        return found, definite
    if type(stmt).__name__ == "Match":
        found = []
        for case in stmt.cases:
            found += block_bindings(case.body, name)[0]
        return found, False
    return [], False


def block_bindings(block: list, name: str) -> tuple[list[Binding], bool]:
    found: list[Binding] = []
    for stmt in reversed(block):
        b, definite = stmt_bindings(stmt, name)
        found.extend(b)
        if definite:
            return found, True
    return found, False


MISSING = object()


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
    stack = list(func.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            yield node
        if isinstance(node, (*FUNC_TYPES, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))



def callee_name(call: ast.Call) -> Optional[str]:
    """The last name of what ``call`` calls (``f(...)`` and ``x.f(...)``), if it is a name."""
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
