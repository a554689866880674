"""One parsed Python module with the indexes inference needs (parents, scopes, call sites)."""

from __future__ import annotations

import ast
from functools import cached_property
from typing import Optional

from fabric_lsp.engine.model import Span
from fabric_lsp.engine.parse import Parsed, parse

SCOPE_TYPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
FUNC_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef)
_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


class ModuleInfo:
    def __init__(self, text: str, path: Optional[str] = None, name: Optional[str] = None) -> None:
        self.text = text
        self.path = path
        self.name = name  # dotted module name when known
        self.parsed: Parsed = parse(text)
        self.tree = self.parsed.tree
        self.lines = self.parsed.lines

    # -- indexes -----------------------------------------------------------------------------
    @cached_property
    def parents(self) -> dict[ast.AST, ast.AST]:
        parents: dict[ast.AST, ast.AST] = {}
        if self.tree is None:
            return parents
        stack: list[ast.AST] = [self.tree]
        while stack:
            node = stack.pop()
            for child in ast.iter_child_nodes(node):
                parents[child] = node
                stack.append(child)
        return parents

    @cached_property
    def calls(self) -> list[ast.Call]:
        if self.tree is None:
            return []
        return [n for n in ast.walk(self.tree) if isinstance(n, ast.Call)]

    @cached_property
    def calls_by_name(self) -> dict[str, list[ast.Call]]:
        """Call nodes indexed by the callee's last name (``f(...)`` and ``x.f(...)``)."""
        index: dict[str, list[ast.Call]] = {}
        for call in self.calls:
            func = call.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if name:
                index.setdefault(name, []).append(call)
        return index

    @cached_property
    def name_loads(self) -> dict[str, list[ast.Name]]:
        index: dict[str, list[ast.Name]] = {}
        if self.tree is not None:
            for n in ast.walk(self.tree):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                    index.setdefault(n.id, []).append(n)
        return index

    @cached_property
    def _local_names(self) -> dict[ast.AST, set[str]]:
        return {}

    # -- navigation --------------------------------------------------------------------------
    def scope_of(self, node: ast.AST) -> ast.AST:
        """The function, class, lambda or module whose namespace ``node`` is evaluated in."""
        parents = self.parents
        child = node
        cur = parents.get(node)
        while cur is not None:
            if isinstance(cur, SCOPE_TYPES):
                # a function's decorators, defaults and annotations belong to the outer scope
                if isinstance(cur, (*FUNC_TYPES, ast.Lambda)) and child is not cur:
                    if child in getattr(cur, "decorator_list", ()) or child is getattr(cur, "returns", None):
                        pass
                    elif child is cur.args:
                        pass
                    else:
                        return cur
                elif isinstance(cur, ast.ClassDef):
                    if child in cur.body:
                        return cur
                else:
                    return cur
            child = cur
            cur = parents.get(cur)
        return self.tree

    def stmt_of(self, node: ast.AST) -> Optional[ast.stmt]:
        cur: Optional[ast.AST] = node
        while cur is not None and not isinstance(cur, ast.stmt):
            cur = self.parents.get(cur)
        return cur

    def block_of(self, stmt: ast.AST) -> tuple[Optional[ast.AST], list, int]:
        """(parent node, the statement list holding ``stmt``, its index)."""
        parent = self.parents.get(stmt)
        if parent is None:
            return None, [], -1
        for field in _BLOCK_FIELDS:
            block = getattr(parent, field, None)
            if isinstance(block, list):
                for i, item in enumerate(block):
                    if item is stmt:
                        return parent, block, i
        return parent, [], -1

    def enclosing_class(self, func: ast.AST) -> Optional[ast.ClassDef]:
        parent = self.parents.get(func)
        return parent if isinstance(parent, ast.ClassDef) else None

    def local_names(self, scope: ast.AST) -> set[str]:
        """Names bound in ``scope`` (its parameters and assignments), minus ``global``/``nonlocal``."""
        cache = self._local_names
        if scope in cache:
            return cache[scope]
        bound: set[str] = set()
        declared: set[str] = set()
        if isinstance(scope, (*FUNC_TYPES, ast.Lambda)):
            a = scope.args
            for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg):
                if arg is not None:
                    bound.add(arg.arg)
        body = scope.body if isinstance(scope.body, list) else [scope.body]
        stack = list(body)
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                declared.update(node.names)
            elif isinstance(node, (*FUNC_TYPES, ast.ClassDef)):
                bound.add(node.name)
                stack.extend(node.decorator_list)
                continue
            elif isinstance(node, ast.Lambda):
                continue
            elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                bound.add(node.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    bound.add((alias.asname or alias.name).split(".")[0])
            elif isinstance(node, ast.ExceptHandler) and node.name:
                bound.add(node.name)
            elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                continue
            stack.extend(ast.iter_child_nodes(node))
        result = bound - declared
        cache[scope] = result
        return result

    def declared_global(self, scope: ast.AST, name: str) -> bool:
        for node in ast.walk(scope):
            if isinstance(node, ast.Global) and name in node.names:
                return True
        return False

    def span(self, node: ast.AST) -> Span:
        return Span(self.lines.node_start(node), self.lines.node_end(node))

    def segment(self, node: ast.AST) -> str:
        return self.lines.segment(node)


def load_module(text: str, path: Optional[str] = None, name: Optional[str] = None) -> ModuleInfo:
    return ModuleInfo(text, path, name)
