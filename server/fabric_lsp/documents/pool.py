"""How a project's modules are handed to worker processes, by ``fabric-lsp check --jobs`` and by
the server's cold ``workspace/diagnostic`` alike: in chunks of neighbouring files (they import the
same modules, so a worker parses and looks them up once), the chunks most costly first (a worker
that is done takes the next, and a chunk holding a long file is not left for last while the other
workers have nothing to do)."""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from fabric_lsp import declared_version, facts, generated_code
from fabric_lsp.engine.collector import gc_paused

if TYPE_CHECKING:
    from fabric_lsp.config import Config

#: the words of what an analysis follows furthest (Fabrics and Trainers, their set-ups and launches),
#: counted as substrings (``str.count`` reads a file ~20× faster than a regular expression's search)
_COSTLY = ("abric", "rainer", "setup", "backward", "launch", "LightningModule")
#: the most files in one chunk
MAX_CHUNK = 16
#: what a worker process imports before its first analysis (forked from a process that has
#: imported it, a worker starts without importing anything)
PRELOAD = "fabric_lsp.documents.preload"


def import_preload() -> None:
    """Import :data:`PRELOAD` with the garbage collector paused, then freeze what the process holds
    (:func:`gc_paused`): each of its callers forks workers next, and neither it nor they scan those
    objects again (in a process forked from another, a collection would also write to, and so copy,
    each page it shares with its parent). ImportError where the engine cannot be imported (each
    analysis says why)."""
    with gc_paused(freeze=True):
        importlib.import_module(PRELOAD)
    generated_code.save()  # what the import compiled, before the process forks (its workers never save)


def expected_cost(text: str) -> int:
    """How long a file's analysis may take, to hand the longest out first: its size, and as much
    again as two kilobytes for each mention of what the analysis follows furthest."""
    return len(text) + 2000 * sum(text.count(word) for word in _COSTLY)


def chunks(costs: Sequence[int], jobs: int) -> list[range]:
    """The indices of the files whose ``costs`` are given, in chunks of neighbouring files for
    ``jobs`` workers, the chunk of the greatest summed cost first. Small chunks keep the cores
    busy to the end (about four per worker); big enough to amortise handing them over."""
    size = max(1, min(MAX_CHUNK, len(costs) // (max(1, jobs) * 4)))
    starts = sorted(range(0, len(costs), size), key=lambda i: -sum(costs[i : i + size]))
    return [range(start, min(start + size, len(costs))) for start in starts]


class Affinity:
    """Which chunk (of :func:`chunks`) a worker that is done takes next: of the costliest few not
    handed yet (:data:`PICK_WINDOW`, at least half as costly as the costliest), the one holding the
    most files that worker parsed already. What those files share with its earlier chunks (the
    callers of a helper, a Fabric's configurations) is known in that worker, not in the others:
    on fusion_bench, a chunk takes ~500 ms after the chunk it shares that with, ~750 ms after
    another."""

    def __init__(self, order: list[range], paths: Sequence[str], costs: Sequence[int]) -> None:
        self.order, self.paths = order, paths
        self.costs = [sum(costs[i] for i in r) for r in order]
        #: chunk → the files its worker had parsed once it was done with it
        self.parsed: dict[int, frozenset[str]] = {}

    def pick(self, done: list[int], pending: list[int]) -> int:
        known = self.parsed.get(done[-1], frozenset()) if done else frozenset()
        least = self.costs[pending[0]] / 2
        window = [k for k in pending[:PICK_WINDOW] if self.costs[k] >= least]
        return max(window, key=lambda k: (sum(self.paths[i] in known for i in self.order[k]), -window.index(k)))


#: how many of the costliest chunks not handed yet a worker that is done chooses among
PICK_WINDOW = 3


#: the Lightning versions worked out in one process, for the workers it starts: those the projects
#: declare (:func:`declared_version.remembered`) and those installed in the analysed environments
#: (:func:`facts.remembered_installed`)
Versions = tuple[dict, dict]


def versions_for(configs: Iterable[Config]) -> Versions:
    """The Lightning versions the settings ``configs`` take, worked out here (each is asked
    ``effective_lightning_version`` for the caches it fills), for workers started from here to
    :func:`recall_versions`: a worker would otherwise import ``packaging`` and read the
    requirements again, and read the packages' metadata again, at its first analysis
    (~15–30 ms each, in every worker)."""
    for config in {id(c): c for c in configs}.values():
        _ = config.effective_lightning_version
    return declared_version.remembered(), facts.remembered_installed()


def recall_versions(versions: Versions) -> None:
    """Take the versions another process worked out (:func:`versions_for`), before any analysis."""
    declared, installed = versions
    declared_version.recall(declared)
    facts.recall_installed(installed)


__all__ = [
    "MAX_CHUNK",
    "Affinity",
    "PRELOAD",
    "Versions",
    "chunks",
    "expected_cost",
    "import_preload",
    "recall_versions",
    "versions_for",
]
