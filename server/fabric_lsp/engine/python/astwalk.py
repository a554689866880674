""":func:`ast.walk` and :func:`ast.iter_child_nodes` as lists, in the same order.

The standard library's walk is a generator over a generator per node (``iter_child_nodes`` over
``iter_fields``); the analyses walk whole functions and modules many times over, and these
loops make the same nodes in the same order in about 60 % of the time. Where a walk stops at the
first match (``any(...)``, ``next(...)``) over a large tree, :func:`ast.walk` is kept.

They read only the fields of a node that may hold nodes (:data:`NODE_FIELDS`): a name, an
attribute's name, a constant's value, a line number is never a node, and is never read.
"""

from __future__ import annotations

import ast
import typing

_AST = ast.AST

#: the fields that never hold a node (the grammar's identifiers, strings, constants and numbers),
#: by node class, in the grammars of Python 3.9 to 3.12 (from 3.13 on, the classes tell their
#: fields' types themselves: ``_field_types``)
_NOT_NODES: dict[str, tuple[str, ...]] = {
    "FunctionDef": ("name", "type_comment"),
    "AsyncFunctionDef": ("name", "type_comment"),
    "ClassDef": ("name",),
    "Assign": ("type_comment",),
    "AnnAssign": ("simple",),
    "For": ("type_comment",),
    "AsyncFor": ("type_comment",),
    "With": ("type_comment",),
    "AsyncWith": ("type_comment",),
    "ImportFrom": ("module", "level"),
    "Global": ("names",),
    "Nonlocal": ("names",),
    "FormattedValue": ("conversion",),
    "Constant": ("value", "kind"),
    "Attribute": ("attr",),
    "Name": ("id",),
    "comprehension": ("is_async",),
    "ExceptHandler": ("name",),
    "arg": ("arg", "type_comment"),
    "keyword": ("arg",),
    "alias": ("name", "asname"),
    "MatchSingleton": ("value",),
    "MatchMapping": ("rest",),
    "MatchClass": ("kwd_attrs",),
    "MatchStar": ("name",),
    "MatchAs": ("name",),
    "TypeIgnore": ("lineno", "tag"),
    "TypeVar": ("name",),
    "ParamSpec": ("name",),
    "TypeVarTuple": ("name",),
}


def _holds_nodes(annotation: object) -> bool:
    """Whether a field of this type (``expr``, ``list[stmt]``, ``expr | None``, ``str``…) may hold a node."""
    inner = typing.get_args(annotation)
    if inner:
        return any(_holds_nodes(t) for t in inner)
    return isinstance(annotation, type) and issubclass(annotation, _AST)


def _node_fields(cls: type) -> tuple[str, ...]:
    fields = getattr(cls, "_fields", ())
    types = getattr(cls, "_field_types", None)
    if types is not None:
        return tuple(f for f in fields if f not in types or _holds_nodes(types[f]))
    never = _NOT_NODES.get(cls.__name__, ())
    return tuple(f for f in fields if f not in never)


class _NodeFields(dict):
    """Node class → the fields (in ``_fields`` order) that may hold a node or a list of nodes
    (and None: a ``**`` entry of a dict, a keyword-only parameter without default); a class is
    looked at the first time one of its nodes is walked."""

    def __missing__(self, cls: type) -> tuple[str, ...]:
        found = self[cls] = _node_fields(cls)
        return found


NODE_FIELDS: dict[type, tuple[str, ...]] = _NodeFields()


def children(node: ast.AST) -> list[ast.AST]:
    """``list(ast.iter_child_nodes(node))``."""
    out: list[ast.AST] = []
    for name in NODE_FIELDS[type(node)]:
        value = getattr(node, name, None)
        if type(value) is list:
            out += [item for item in value if item is not None]
        elif value is not None:
            out.append(value)
    return out


def block_children(node: ast.AST) -> list[ast.AST]:
    """The children of ``node`` that hold statements or are statements (its blocks' statements,
    ``except`` handlers, ``case`` clauses), in :func:`children`'s order: a walk that looks for
    statements need not enter an expression (no statement is inside one). They are always in a
    list field, and a list field holds nodes of one kind."""
    out: list[ast.AST] = []
    for name in NODE_FIELDS[type(node)]:
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
    fields = NODE_FIELDS
    i = 0
    while i < len(out):
        current = out[i]
        i += 1
        for name in fields[type(current)]:
            value = getattr(current, name, None)
            if type(value) is list:
                for item in value:
                    if item is not None:
                        append(item)
            elif value is not None:
                append(value)
    return out


__all__ = ["CLAUSES", "NODE_FIELDS", "block_children", "children", "statements", "walk"]
