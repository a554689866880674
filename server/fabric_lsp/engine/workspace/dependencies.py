"""Which modules each analysis looked up, and which analysed documents a change touches.

:class:`Recorder` collects the lookups one analysis makes through
:class:`~fabric_lsp.engine.workspace.workspace.Workspace` (files read, module names not found, names
searched for across the workspace); :class:`DependencyGraph` keeps the last record of every
analysed document and answers "which documents must be re-analysed because this file changed,
appeared or disappeared?". No editor protocol here: the server keys documents by URI, a batch
run could key them by path.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Dependencies:
    """What one analysis depended on besides the analysed text itself."""

    #: Absolute paths of the modules it read (through an import or a workspace search).
    paths: frozenset[str] = frozenset()
    #: Dotted module names it looked for and did not find.
    missing: frozenset[str] = frozenset()
    #: Names it searched the workspace's files for (a file that starts mentioning one matters).
    mentions: frozenset[str] = frozenset()
    #: Listings of the project it read whole (:data:`LISTINGS`: its batch scripts, the text files
    #: that may run a script with the Fabric CLI, its notebooks): a file added to one, or changed,
    #: matters.
    listings: frozenset[str] = frozenset()


#: the project listings an analysis may read whole
BATCH_SCRIPTS, TEXT_FILES, NOTEBOOKS = "batch scripts", "text files", "notebooks"
LISTINGS = (BATCH_SCRIPTS, TEXT_FILES, NOTEBOOKS)


@dataclass
class Recorder:
    """Collects the lookups of one analysis (one thread); :meth:`freeze` gives the result."""

    paths: set[str] = field(default_factory=set)
    missing: set[str] = field(default_factory=set)
    mentions: set[str] = field(default_factory=set)
    listings: set[str] = field(default_factory=set)

    def freeze(self) -> Dependencies:
        return Dependencies(
            frozenset(self.paths), frozenset(self.missing), frozenset(self.mentions), frozenset(self.listings)
        )


def module_names_of(path: str) -> set[str]:
    """Every dotted name under which ``path`` could be imported from some base folder:
    ``/w/pkg/sub/mod.py`` → ``mod``, ``sub.mod``, ``pkg.sub.mod``, … (``__init__.py`` names its
    package). A missing name equal to one of these may now resolve to ``path``."""
    parts = os.path.abspath(path).split(os.sep)
    if not parts or not parts[-1].endswith(".py"):
        return set()
    parts[-1] = parts[-1][:-3]
    if parts[-1] == "__init__":
        parts.pop()
    names: set[str] = set()
    for start in range(len(parts) - 1, -1, -1):
        tail = parts[start:]
        if not all(p.isidentifier() for p in tail):
            break
        names.add(".".join(tail))
    return names


class DependencyGraph:
    """The last :class:`Dependencies` of every analysed document, queried when files change.
    Thread-safe: analyses record from the worker thread, changes are asked about from the
    event loop."""

    def __init__(self) -> None:
        self._deps: dict[str, Dependencies] = {}
        self._lock = threading.Lock()

    def record(self, key: str, deps: Dependencies, *, merge: bool = False) -> None:
        """Keep ``deps`` as the document's record; ``merge``: add them to the previous record
        instead (an analysis that reused earlier results did not repeat their lookups)."""
        with self._lock:
            previous = self._deps.get(key) if merge else None
            if previous is not None:
                deps = Dependencies(
                    previous.paths | deps.paths,
                    previous.missing | deps.missing,
                    previous.mentions | deps.mentions,
                    previous.listings | deps.listings,
                )
            self._deps[key] = deps

    def forget(self, key: str) -> None:
        with self._lock:
            self._deps.pop(key, None)

    def get(self, key: str) -> Dependencies | None:
        with self._lock:
            return self._deps.get(key)

    def dependents(
        self,
        path: str,
        *,
        appeared_or_vanished: bool = False,
        text: Callable[[str], str | None] | None = None,
    ) -> set[str]:
        """Documents whose analysis may change because the file at ``path`` changed.

        A document depends on ``path`` when it read it; when ``path`` appeared or vanished, also
        when it looked for a module name that ``path`` could provide; and when it searched the
        workspace for a name that the file's new text (``text(path)``) mentions."""
        path = os.path.abspath(path)
        names = module_names_of(path) if appeared_or_vanished else set()
        with self._lock:
            items = list(self._deps.items())
        content: str | None = None
        out: set[str] = set()
        for key, deps in items:
            if path in deps.paths or (names and not names.isdisjoint(deps.missing)):
                out.add(key)
            elif deps.mentions and text is not None:
                if content is None:
                    content = text(path) or ""
                if _mentions_any(content, deps.mentions):
                    out.add(key)
        return out


def _mentions_any(text: str, names: frozenset[str]) -> bool:
    if not text:
        return False
    alternatives = "|".join(re.escape(n) for n in sorted(names))
    pattern = re.compile(rf"\b(?:{alternatives})\b")
    return pattern.search(text) is not None


__all__ = [
    "BATCH_SCRIPTS",
    "LISTINGS",
    "NOTEBOOKS",
    "TEXT_FILES",
    "Dependencies",
    "DependencyGraph",
    "Recorder",
    "module_names_of",
]
