"""Modules analysed in worker processes, for the server's cold ``workspace/diagnostic``.

The server analyses documents on one thread; a whole project checked on that thread takes as long
as ``fabric-lsp check --jobs 1``. Here the modules of a project are analysed in worker processes
instead (each with its own workspace over the files on disk, as ``fabric-lsp check``'s workers),
and each result comes back with what its analysis looked up, so that the server reuses it only
where it read no open document (an unsaved buffer a worker cannot see) and knows what it
depends on.

Workers are spawned, not forked: the server runs threads. Their standard output is closed, as
the server's own carries the protocol.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Callable

from fabric_lsp.config import Config
from fabric_lsp.documents import check
from fabric_lsp.engine.findings import Finding
from fabric_lsp.engine.workspace.dependencies import Dependencies

#: fewer modules to analyse than this are analysed on the server's thread: starting workers
#: (each imports the engine and jedi, about a second) would cost more than it saves
MIN_MODULES = 24


@dataclass(frozen=True)
class Job:
    path: str
    text: str
    config: Config


@dataclass(frozen=True)
class Done:
    """A module's findings as its configuration gives them, and what its analysis looked up."""

    text: str
    findings: tuple[Finding, ...]
    deps: Dependencies


_STATE: dict = {}


def cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _start(root: str | None, environment: str | None) -> None:
    from fabric_lsp.documents.analyzers import Analyzers
    from fabric_lsp.engine.workspace.workspace import Workspace

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # never a byte on the server's protocol stream
    os.close(devnull)
    _STATE["analyzers"] = Analyzers(Workspace(root, environment, single_threaded=True))  # a worker runs no other thread


def _analyse(job: Job) -> Done | None:
    analyzers = _STATE["analyzers"]
    try:
        with analyzers.workspace.recording() as recorder:
            analysis = check.analysis(analyzers.for_config(job.config), job.config, job.text, job.path)
    except Exception:  # the server analyses it again itself, and reports what went wrong
        return None
    return Done(job.text, tuple(analysis.findings), recorder.freeze())


class Workers:
    """Worker processes analysing modules, results asked for by path (in the order submitted,
    so the server reports the first batches while the workers go on)."""

    def __init__(self, root: str | None, environment: str | None, log: Callable[[str], None]) -> None:
        self.root, self.environment, self.log = root, environment, log
        self._pool: ProcessPoolExecutor | None = None
        self._pending: dict[str, Future] = {}

    def submit(self, jobs: Sequence[Job], workers: int) -> None:
        """Start analysing ``jobs``; nothing when there are too few to pay for the workers."""
        workers = min(workers, len(jobs))
        if workers < 2 or len(jobs) < MIN_MODULES:
            return
        self.log(f"fabric-lsp: analysing {len(jobs)} modules in {workers} worker processes")
        context = multiprocessing.get_context("spawn")
        try:
            self._pool = ProcessPoolExecutor(workers, context, initializer=_start, initargs=(self.root, self.environment))
            self._pending = {job.path: self._pool.submit(_analyse, job) for job in jobs}
        except OSError as exc:
            self.log(f"fabric-lsp: worker processes did not start ({exc}); analysing on one thread")
            self.close()

    def result(self, path: str, text: str) -> Done | None:
        """The analysis of ``path`` as submitted, if it was and the text is still ``text``."""
        future = self._pending.pop(path, None)
        if future is None:
            return None
        try:
            done = future.result()
        except (BrokenProcessPool, OSError) as exc:
            self.log(f"fabric-lsp: worker processes failed ({type(exc).__name__}: {exc}); analysing on one thread")
            self.close()
            return None
        return done if done is not None and done.text == text else None

    def close(self) -> None:
        for future in self._pending.values():
            future.cancel()
        self._pending = {}
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
