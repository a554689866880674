"""Reuse of per-site verdicts across versions of a document.

A verdict is reused when nothing it read has changed:

- the module-level statement holding the site has the same text (sites in module-level code are
  always recomputed: the statements around them are their block);
- for every identifier the evaluation looked up in the document's index, the statements that
  mention it are the same texts in the same order (the site's own statement included, so a
  binding that moves from before the site to after it counts as a change);
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
from dataclasses import dataclass, field
from typing import Any

from fabric_lsp.engine.bindings import stmt_bindings
from fabric_lsp.engine.model import Pos, Span, Verdict
from fabric_lsp.engine.modules import ModuleInfo

TopKey = tuple[int, int]


@dataclass(frozen=True)
class SiteMemo:
    verdict: Verdict | None
    #: (identifier, look-up kind) → keys of the statements it depended on (and the site's), in
    #: document order
    names: tuple[tuple[str, tuple[str, ...], tuple[TopKey, ...]], ...]
    #: the workspace epoch the verdict was computed at, when it read other modules
    epoch: int | None


def _name_keys(module: ModuleInfo, name: str, kinds: tuple[str, ...], site_top: int) -> tuple[TopKey, ...]:
    """The keys of the statements the look-ups of ``name`` depended on, with the site's own in
    its place: those mentioning it ("mention"), binding it ("binding"), or also mentioning
    ``global`` ("global")."""
    mentioning = set(module.index.get(name, ()))
    ids: set[int] = set()
    if "mention" in kinds:
        ids = mentioning
    else:
        if "binding" in kinds:
            body = module._tops[2]
            ids |= {i for i in mentioning if stmt_bindings(body[i], name)[0]}
        if "global" in kinds:
            ids |= mentioning & set(module.index.get("global", ()))
    ids.add(site_top)
    keys = module.top_keys
    return tuple(keys[i] for i in sorted(ids))


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


def record(module: ModuleInfo, site: ast.AST, lookups: dict[str, set[str]], external: bool, epoch: int, verdict: Verdict | None) -> SiteMemo:
    top = site_top(module, site)
    names = tuple(sorted((n, tuple(sorted(k)), _name_keys(module, n, tuple(sorted(k)), top)) for n, k in lookups.items()))
    return SiteMemo(verdict, names, epoch if external else None)


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
        if any(_name_keys(module, name, kinds, top) != keys for name, kinds, keys in memo.names):
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
        if isinstance(obj, Span):
            return self.span(obj) if here else obj
        if isinstance(obj, (tuple, list)):
            items = [self._walk(x, here) for x in obj]
            return type(obj)(items) if any(a is not b for a, b in zip(items, obj)) else obj
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            path = getattr(obj, "path", None)
            inside = here and (path is None or path == self.path)
            changes = {}
            for f in dataclasses.fields(obj):
                value = getattr(obj, f.name)
                moved = self._walk(value, inside)
                if moved is not value:
                    changes[f.name] = moved
            return dataclasses.replace(obj, **changes) if changes else obj
        return obj
