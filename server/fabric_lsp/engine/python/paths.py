"""Paths: the decisions an alternative depends on.

An expression evaluates to alternatives (:mod:`fabric_lsp.engine.python.values`); each alternative
carries its *path*, the set of ``(decision, outcome)`` pairs it was chosen under: which way a
condition went, which call site filled a parameter, which command-line choice a value is. Two
alternatives whose paths give one decision two outcomes never happen together, so a
configuration is built only from alternatives whose paths agree (:func:`merge`).

A path only ever removes combinations the program cannot reach; an alternative without a path
combines with anything, as every alternative did before paths existed.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any, TypeVar

Path = frozenset
EMPTY: frozenset = frozenset()
#: at most this many decisions are kept on one alternative (more: the newest are dropped, which
#: only makes the alternative combine with more, never with less)
MAX_DECISIONS = 24

V = TypeVar("V")


def path_of(value: Any) -> frozenset:
    return getattr(value, "path", EMPTY)


def merge(a: frozenset, b: frozenset) -> frozenset | None:
    """The union of two paths, or None where they disagree on a decision."""
    if not a or a is b:
        return b
    if not b:
        return a
    key = (a, b)
    found = _MERGED.get(key, _UNKNOWN)  # one look-up: another thread may empty the memo meanwhile
    if found is _UNKNOWN:
        if len(_MERGED) > 100_000:
            _MERGED.clear()
        found = _MERGED[key] = _merged(a, b)
    return found  # type: ignore[return-value]


#: (path, path) → :func:`merge` of them (the same paths are merged again and again)
_MERGED: dict[tuple[frozenset, frozenset], frozenset | None] = {}
_UNKNOWN = object()


def _merged(a: frozenset, b: frozenset) -> frozenset | None:
    if len(b) > len(a):
        a, b = b, a
    extra = b - a  # the pairs only ``b`` has: a disagreement is one of them on a decision of ``a``
    if not extra:
        return a
    decided = decisions(a)
    for key, _ in extra:
        if key in decided:
            return None
    merged = a | b
    return merged if len(merged) <= MAX_DECISIONS else a


def extended_by(path: frozenset, pair: tuple) -> frozenset:
    """``path`` with one more ``(decision, outcome)`` pair, on a decision it does not make (as
    :func:`merge` with the pair: ``path`` itself where it holds :data:`MAX_DECISIONS` already)."""
    return path | {pair} if len(path) < MAX_DECISIONS else path


#: path → its decisions (a path is hashed once; the same paths are merged again and again)
_DECISIONS: dict[frozenset, frozenset] = {}


def decisions(path: frozenset) -> frozenset:
    """The decisions ``path`` makes (without their outcomes)."""
    found = _DECISIONS.get(path)
    if found is None:
        if len(_DECISIONS) > 100_000:
            _DECISIONS.clear()
        found = _DECISIONS[path] = frozenset(key for key, _ in path)
    return found


def extended(value: V, path: frozenset) -> V | None:
    """``value`` on ``path`` as well (a copy), or None where its own path disagrees."""
    own = path_of(value)
    merged = merge(own, path)
    if merged is None:
        return None
    if merged == own:
        return value
    new = object.__new__(type(value))  # a shallow copy (values are plain dataclasses): ~5x copy.copy
    new.__dict__.update(value.__dict__)
    new.__dict__["path"] = merged
    return new


def restrict(values: Iterable[V], path: frozenset) -> list[V]:
    """The alternatives that can happen on ``path``, each extended by it."""
    if not path:
        return list(values)
    return [x for v in values if (x := extended(v, path)) is not None]


def tagged(values: list[V], key: Hashable, single: bool = False) -> list[V]:
    """Alternatives of one decision ``key``: the i-th is chosen when ``key`` goes the i-th way
    (``single``: a lone alternative is tagged too, so that it keeps its identity)."""
    if len(values) < (1 if single else 2):
        return values
    out = []
    for i, v in enumerate(values):
        x = extended(v, frozenset({(key, i)}))
        if x is not None:
            out.append(x)
    return out


def carried(new: V, old: Any) -> V:
    """``new`` (made from ``old``) on ``old``'s path."""
    path = path_of(old)
    if not path or path_of(new) == path:
        return new
    return extended(new, path) or new
