"""Code that expects a failure: a ``try`` whose handlers catch the exception, a test's
``pytest.raises``/``assertRaises`` around it (a 1.x/2.x compatibility shim, a test of the error).
Shared by the rules that report an exception Lightning raises (PL004, PL005)."""

from __future__ import annotations

import ast

from fabric_lsp.engine.semantic.model import SemanticModel

_CATCH_ALL = ("Exception", "BaseException")


def caught(model: SemanticModel, node: ast.AST, exception: str) -> bool:
    """Whether ``node`` is in the body of a ``try`` of its function whose handlers catch
    ``exception`` (by name, ``Exception``, ``BaseException`` or a bare ``except``): the code
    expects the failure (a 1.x/2.x compatibility shim)."""
    prev, cur = node, model.module.parent_of(node)
    while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
        if isinstance(cur, ast.Try) and prev in cur.body and any(_catches(h.type, exception) for h in cur.handlers):
            return True
        if (
            isinstance(cur, (ast.With, ast.AsyncWith))
            and prev in cur.body
            and any(_expects(i.context_expr, exception) for i in cur.items)
        ):
            return True
        prev, cur = cur, model.module.parent_of(cur)
    return False


#: context managers of test frameworks that expect their body to raise their first argument
_EXPECTING = ("raises", "assertRaises", "assertRaisesRegex")


def _expects(node: ast.expr, exception: str) -> bool:
    """``pytest.raises(TypeError)``, ``self.assertRaises(TypeError)``: a test that expects it."""
    if not isinstance(node, ast.Call) or not node.args:
        return False
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    return name in _EXPECTING and _catches(node.args[0], exception)


def _catches(node: ast.expr | None, exception: str) -> bool:
    if node is None:
        return True
    if isinstance(node, ast.Tuple):
        return any(_catches(e, exception) for e in node.elts)
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name == exception or name in _CATCH_ALL
