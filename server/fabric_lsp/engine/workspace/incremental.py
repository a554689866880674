"""Reuse of per-site verdicts across versions of a document.

A verdict is reused when nothing it read has changed:

- the rules run and the settings are the same: every field of the rule context
  (``RuleContext.settings``: ``report_unknown``, the Lightning version …) is part of the memo's
  context, so a verdict computed under one Lightning version is never reused under another;
- the module-level statement holding the site has the same text (sites in module-level code are
  always recomputed: the statements around them are their block);
- for every identifier the evaluation looked up in the document's index, the statements that
  mention it are the same texts in the same order (the site's own statement included, so a
  binding that moves from before the site to after it counts as a change); only those that bind
  it, for a name-resolution look-up;
- every module-level statement read by position (a look-up inside one function or class,
  :meth:`ModuleInfo.calls_within`) still exists with the same text;
- if the evaluation read other modules, no other document or file has changed since
  (:meth:`Workspace.epoch_excluding`).

A reused verdict moves with its statements: each span is shifted by the line delta of the
statement holding it. Rules keep positions out of their messages for that reason (related
information carries them).
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import weakref
from dataclasses import dataclass, field
from typing import Any

from fabric_lsp.engine.findings import Pos, Span, Verdict
from fabric_lsp.engine.python.bindings import stmt_bindings
from fabric_lsp.engine.python.modules import STATEMENTS, ModuleInfo

TopKey = tuple[int, int]


@dataclass(frozen=True)
class SiteMemo:
    verdict: Verdict | None
    #: per identifier looked up: (name, look-up kinds, digest of the keys of the statements the
    #: look-ups depended on, where the site's own statement sits among them)
    names: tuple[tuple[str, tuple[str, ...], int, tuple[int, bool]], ...]
    #: the workspace epoch the verdict was computed at, when it read other modules
    epoch: int | None


#: module → (name, kinds) → (indexes of the statements depended on, digest of their keys)
_DEPENDED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _top_key_set(module: ModuleInfo) -> set[str]:
    per_module = _DEPENDED.setdefault(module, {})
    found = per_module.get(STATEMENTS)
    if found is None:
        found = per_module[STATEMENTS] = {f"{h}:{n}" for h, n in module.top_keys}
    return found


def _depended(module: ModuleInfo, name: str, kinds: tuple[str, ...]) -> tuple[list[int], int]:
    """The statements the look-ups of ``name`` depended on — those mentioning it ("mention"),
    binding it ("binding"), or also mentioning ``global`` ("global") — and a digest of their
    keys in document order. Computed once per version and name: every site of a document looks
    up the same few names, so the cost is per name, not per site and name."""
    per_module = _DEPENDED.setdefault(module, {})
    found = per_module.get((name, kinds))
    if found is None:
        mentioning = module.index.get(name, ())
        if "mention" in kinds:
            ids = list(mentioning)
        else:
            chosen: set[int] = set()
            if "binding" in kinds:
                body = module._tops[2]
                chosen |= {i for i in mentioning if _binds(body[i], name)}
            if "global" in kinds:
                chosen |= set(mentioning) & set(module.index.get("global", ()))
            ids = sorted(chosen)
        keys = module.top_keys
        found = per_module[(name, kinds)] = (ids, hash(tuple(keys[i] for i in ids)))
    return found


def _binds(stmt: ast.stmt, name: str) -> bool:
    """Whether the module-level statement ``stmt`` may bind ``name``: an assignment, import,
    definition … (:func:`stmt_bindings`) or an assignment expression outside a function."""
    if stmt_bindings(stmt, name)[0]:
        return True
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return False
    return any(isinstance(n, ast.NamedExpr) and n.target.id == name for n in ast.walk(stmt))


def _name_state(module: ModuleInfo, name: str, kinds: tuple[str, ...], site_top: int) -> tuple[int, tuple[int, bool]]:
    """What the look-ups of ``name`` at a site in statement ``site_top`` depended on: the digest
    of the depended-on statements and the site's place among them (a binding that moves from
    before the site to after it counts as a change). For :data:`STATEMENTS`, whether the
    statements read by position all still exist with the same text (1) or not (0)."""
    if name == STATEMENTS:
        present = _top_key_set(module)
        return int(all(k in present for k in kinds)), (0, False)
    ids, digest = _depended(module, name, kinds)
    at = bisect.bisect_left(ids, site_top)
    return digest, (at, at < len(ids) and ids[at] == site_top)


def site_key(module: ModuleInfo, code: str, site: ast.AST) -> tuple | None:
    """The key of a site: its rule, its statement's key and its place inside the statement;
    None for a site in module-level code (never reused)."""
    top = module.top_for_line(site.lineno)
    if not isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return None
    i = module.top_index(top)
    start = module._tops[0][i]
    return (code, module.top_keys[i], site.lineno - start, site.col_offset)


def site_top(module: ModuleInfo, site: ast.AST) -> int:
    top = module.top_for_line(site.lineno)
    return module.top_index(top) if top is not None else -1


def record(
    module: ModuleInfo, site: ast.AST, lookups: dict[str, set[str]], external: bool, epoch: int, verdict: Verdict | None
) -> SiteMemo:
    top = site_top(module, site)
    names = []
    for name, kinds in sorted(lookups.items()):
        ordered = tuple(sorted(kinds))
        names.append((name, ordered, *_name_state(module, name, ordered, top)))
    return SiteMemo(verdict, tuple(names), epoch if external else None)


@dataclass
class DocumentMemo:
    """What one version of a document left for the next: its statements' keys and places, and
    the memo of each site."""

    context: tuple
    top_keys: list[TopKey]
    starts: list[int]  # 1-based first line of each module-level statement
    ends: list[int]
    sites: dict[tuple, SiteMemo] = field(default_factory=dict)

    @classmethod
    def of(cls, module: ModuleInfo, context: tuple) -> DocumentMemo:
        starts, ends, _ = module._tops
        return cls(context, module.top_keys, list(starts), list(ends))

    def reuse(self, key: tuple | None, module: ModuleInfo, site: ast.AST, epoch: int) -> SiteMemo | None:
        """The memo of ``key`` moved to ``module``, if it is still valid there."""
        memo = self.sites.get(key) if key is not None else None
        if memo is None or (memo.epoch is not None and memo.epoch != epoch):
            return None
        top = site_top(module, site)
        if any(_name_state(module, name, kinds, top) != (digest, at) for name, kinds, digest, at in memo.names):
            return None
        if memo.verdict is None:
            return memo
        moved = _Mover(self, module).move(memo.verdict)
        return None if moved is None else dataclasses.replace(memo, verdict=moved)


class _Unmovable(Exception):
    pass


class _Mover:
    """Shifts the spans of a verdict from the old version's lines to the new one's."""

    def __init__(self, old: DocumentMemo, module: ModuleInfo) -> None:
        self.old = old
        self.path = module.path
        new_starts = module._tops[0]
        self.new_start = {k: new_starts[i] for i, k in enumerate(module.top_keys)}

    def delta(self, line0: int) -> int:
        line = line0 + 1
        i = bisect.bisect_right(self.old.starts, line) - 1
        if i < 0 or self.old.ends[i] < line:
            raise _Unmovable
        new = self.new_start.get(self.old.top_keys[i])
        if new is None:
            raise _Unmovable
        return new - self.old.starts[i]

    def span(self, span: Span) -> Span:
        d = self.delta(span.start.line)
        if d == 0:
            return span
        if self.delta(span.end.line) != d:
            raise _Unmovable
        return Span(Pos(span.start.line + d, span.start.col), Pos(span.end.line + d, span.end.col))

    def move(self, verdict: Verdict) -> Verdict | None:
        try:
            return self._walk(verdict, True)
        except _Unmovable:
            return None

    def _walk(self, obj: Any, here: bool) -> Any:
        kind = type(obj)
        if kind in _LEAVES:
            return obj
        if kind is Span:
            return self.span(obj) if here else obj
        if isinstance(obj, (tuple, list)):
            items = [self._walk(x, here) for x in obj]
            return kind(items) if any(a is not b for a, b in zip(items, obj)) else obj
        names = _field_names(kind)
        if names is None:
            return obj
        path = getattr(obj, "path", None)
        inside = here and (path is None or path == self.path)
        changes = {}
        for name in names:
            value = getattr(obj, name)
            moved = self._walk(value, inside)
            if moved is not value:
                changes[name] = moved
        return dataclasses.replace(obj, **changes) if changes else obj


#: values that hold no span
_LEAVES = frozenset({str, int, float, bool, type(None), dict})
_FIELDS: dict[type, tuple[str, ...] | None] = {}


def _field_names(kind: type) -> tuple[str, ...] | None:
    """The fields of a dataclass type (None for any other type), looked up once per type."""
    names = _FIELDS.get(kind, ())
    if names == ():
        names = tuple(f.name for f in dataclasses.fields(kind)) if dataclasses.is_dataclass(kind) else None
        _FIELDS[kind] = names
    return names
