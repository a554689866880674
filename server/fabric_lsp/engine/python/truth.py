"""The truth of a test given values for some of its operands (three-valued: ``None`` when it
cannot be told). Shared by the guards' narrowing (:mod:`fabric_lsp.engine.program.guards`) and the
scenarios' consistency with the branch that chose a value (:mod:`fabric_lsp.engine.lightning.configurations`).

``env`` maps ``ast.dump`` of an operand to its value.
"""

from __future__ import annotations

import ast

_UNKNOWN = object()


def _value(node: ast.AST, env: dict):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        values = [_value(e, env) for e in node.elts]
        return _UNKNOWN if any(v is _UNKNOWN for v in values) else tuple(values)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args:
        inner = _value(node.func.value, env)
        if isinstance(inner, str) and node.func.attr in ("lower", "upper", "strip", "casefold"):
            return getattr(inner, node.func.attr)()
        return _UNKNOWN
    return env.get(ast.dump(node), _UNKNOWN)


_COMPARE = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
    ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
}


def truth(test: ast.AST, env: dict) -> bool | None:
    """The truth of ``test`` given the values in ``env``; None when it cannot be told."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = truth(test.operand, env)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        return _truth_of_bool_op(test, env)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        return _truth_of_compare(test, env)
    if (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Attribute)
        and test.func.attr in ("startswith", "endswith")
    ):
        subject = _value(test.func.value, env)
        args = [_value(a, env) for a in test.args]
        if isinstance(subject, str) and args and all(isinstance(a, (str, tuple)) for a in args):
            return getattr(subject, test.func.attr)(args[0])
    return None


def _truth_of_bool_op(test: ast.BoolOp, env: dict) -> bool | None:
    results = [truth(v, env) for v in test.values]
    decisive = isinstance(test.op, ast.Or)  # the value that decides: True for `or`, False for `and`
    if any(r is decisive for r in results):
        return decisive
    return (not decisive) if all(r is (not decisive) for r in results) else None


def _truth_of_compare(test: ast.Compare, env: dict) -> bool | None:
    left, right = _value(test.left, env), _value(test.comparators[0], env)
    compare = _COMPARE.get(type(test.ops[0]))
    if left is _UNKNOWN or right is _UNKNOWN or compare is None:
        return None
    try:
        return bool(compare(left, right))
    except TypeError:
        return None
