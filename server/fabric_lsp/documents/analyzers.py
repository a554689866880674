"""The analyzers of a session (the command line's run, the server): one per file configuration's
enabled rules and settings, all over one workspace."""

from __future__ import annotations

import contextlib
import ctypes
import gc
import sys
from typing import Callable

from fabric_lsp.config import Config
from fabric_lsp.engine.analyzer import Analyzer
from fabric_lsp.engine.workspace.workspace import Workspace


class Analyzers:
    """One :class:`Analyzer` per file configuration's enabled rules and settings, all over one
    workspace: the command line and the server run only the rules a file enables (a disabled
    rule's verdict is never computed, so neither diagnostics nor hover nor code actions show it)."""

    #: analyzers kept (each holds the memos of its documents); the oldest is dropped first
    MAX_ANALYZERS = 16

    def __init__(
        self, workspace: Workspace, log: Callable[[str], None] = lambda m: None, one_run: bool = False
    ) -> None:
        self.workspace = workspace
        self.log = log
        self.one_run = one_run  # see for_one_run
        self._by_key: dict[tuple, Analyzer] = {}

    def for_config(self, config: Config) -> Analyzer:
        """The analyzer of a file's configuration (``per-file-ignores`` applied)."""
        rules = config.enabled_rules()
        version = config.effective_lightning_version
        key = (tuple(r.code for r in rules), bool(config.report_unknown), version)
        analyzer = self._by_key.get(key)
        if analyzer is None:
            analyzer = Analyzer(
                self.workspace,
                rules,
                log=self.log,
                report_unknown=key[1],
                lightning_version=version,
                one_run=self.one_run,
            )
            self._by_key[key] = analyzer
            while len(self._by_key) > self.MAX_ANALYZERS:
                self._by_key.pop(next(iter(self._by_key)))
        return analyzer


def for_one_run(root: str | None, environment: str | None, log: Callable[[str], None] = lambda m: None) -> Analyzers:
    """The analyzers of a process that makes one run and runs no other thread (``fabric-lsp
    check``'s process, a worker of the command line or of the server): its workspace looks the
    running interpreter's modules up without jedi's subprocess and keeps every module jedi
    parsed (see :class:`~fabric_lsp.engine.workspace.workspace.Workspace`'s ``one_run``), the
    garbage collector stops scanning what each analysis leaves for the next
    (:func:`~fabric_lsp.engine.collector.gc_paused`), and the heap is kept (:func:`keep_heap`)."""
    gc.freeze()  # what the process holds now (the engine, imported) is never scanned by the collector
    keep_heap()
    return Analyzers(Workspace(root, environment, one_run=True), log, one_run=True)


def keep_heap() -> None:
    """Keep this process's heap for the rest of its life (a process that makes one run): glibc
    gives the top of the heap back whenever 128 KiB lie free there, and the next analysis faults
    the same pages in again (~6,500 of a litgpt worker's ~28,000 page faults). Nothing off Linux,
    nor where the C library is not glibc (``mallopt`` absent or refused)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).mallopt(_M_TRIM_THRESHOLD, _NEVER_TRIM)


#: glibc's ``mallopt`` parameter for the free space at the heap's top it gives back, and a value
#: no run reaches (1 GiB)
_M_TRIM_THRESHOLD, _NEVER_TRIM = -1, 1 << 30
