"""Modules analysed in worker processes, for the server's cold ``workspace/diagnostic``.

The server analyses documents on one thread; a whole project checked on that thread takes as long
as ``fabric-lsp check --jobs 1``. Here the modules of a project are analysed in worker processes
instead (each with its own workspace over the files on disk, as ``fabric-lsp check``'s workers),
and each result comes back with what its analysis looked up, so that the server reuses it only
where it read no open document (an unsaved buffer a worker cannot see) and knows what it
depends on. The modules go in chunks of neighbouring files, the most costly first, as the command
line's do (:mod:`fabric_lsp.documents.pool`), and the server reports each chunk as it is done.
A pulling client's first report usually finds them under way already: ``fabric-lsp serve`` hands
out the project's modules before it imports the protocol (:mod:`fabric_lsp.lsp.head_start`), and
the report keeps those jobs that are still its own (:meth:`Workers.submit`).

The server runs threads, so its workers are not forked from it once the protocol runs: where the
platform has one, they are forked from a *fork server*, a single-threaded process started from a
fresh interpreter that imports the engine once (:data:`~fabric_lsp.documents.pool.PRELOAD`) before
it forks any worker. The head start's workers are the exception: the server has no other thread
yet, so it imports the engine and forks them itself (:func:`_forking`), at once instead of once a
fork server has imported it. ``fabric-lsp serve`` starts the fork server first thing where there
is no head start (:func:`prestart`), else at ``initialize`` for a pulling client the head start
did not serve, so that it imports the engine while the server imports the protocol and the
client lists and asks; each worker then starts without importing anything, and ends without
tearing its heap down (a forked child leaves by ``os._exit``). Elsewhere they are spawned. Their
standard output is closed, as the server's own carries the protocol.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing.context import BaseContext
from typing import TYPE_CHECKING, Callable

from fabric_lsp.config import Config
from fabric_lsp.documents import check
from fabric_lsp.documents.pool import (
    PRELOAD,
    Versions,
    chunks,
    expected_cost,
    import_preload,
    recall_versions,
    versions_for,
)
from fabric_lsp.engine.findings import Finding
from fabric_lsp.engine.workspace.dependencies import Dependencies

if TYPE_CHECKING:
    from fabric_lsp.documents.cache import Cache

#: fewer modules to analyse than this are analysed on the server's thread: starting workers
#: (each makes a workspace of its own and parses what its modules import) would cost more than it saves
MIN_MODULES = 24


@dataclass(frozen=True)
class Job:
    path: str
    text: str
    config: Config


@dataclass(frozen=True)
class Done:
    """A module's findings as its configuration gives them, what its analysis looked up, and
    which files mention the words it looked up (those not told before it in its unit of work:
    :func:`~fabric_lsp.documents.cache.answers`)."""

    text: str
    findings: tuple[Finding, ...]
    deps: Dependencies
    mentioned: dict[str, tuple[str, ...]]


_STATE: dict = {}


def module_job(path: str, text: str | None, config: Config, root: str | None, cache: Cache | None) -> Job | None:
    """The job of a module on disk with ``text`` under ``config``: None when it is excluded, when
    the cache holds its findings, or when no enabled rule's prefilter keeps it (the command line's
    question: :func:`~fabric_lsp.rules.prefilters.may_have_findings`)."""
    if text is None or config.is_excluded(path, root=config.root or root):
        return None
    from fabric_lsp.rules.prefilters import may_have_findings  # not before a head start reads the first message

    if cache is not None and cache.holds_text(path, text, config):
        return None
    return Job(path, text, config) if may_have_findings(text, config.enabled_codes) else None


def cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def context() -> BaseContext:
    """How worker processes start: forked from the fork server where there is one (it imports
    :data:`PRELOAD` first), else spawned."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload([PRELOAD])
        return ctx
    return multiprocessing.get_context("spawn")


def _forking(fork: bool) -> BaseContext:
    """:func:`context`, or — ``fork``, on Linux, asked by a process that runs no other thread
    (the head start, before the protocol) — forking from it, once it has imported
    :data:`PRELOAD`: the workers start at once, not once a fork server has imported the engine."""
    if fork and sys.platform.startswith("linux") and threading.active_count() == 1:
        import_preload()  # each worker starts with it
        return multiprocessing.get_context("fork")
    return context()


def prestart() -> None:
    """Start the fork server now, if workers are forked from one: it imports the engine while the
    server goes on, and forks the first workers at once when they are asked for. The fork server
    lives as long as the server (it leaves when the server's end of its pipe closes)."""
    if context().get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()


def _start(root: str | None, environment: str | None, versions: Versions) -> None:
    from fabric_lsp.documents.analyzers import for_one_run

    recall_versions(versions)  # worked out by the server: not read again in each worker
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # never a byte on the server's protocol stream
    os.close(devnull)
    _STATE["analyzers"] = for_one_run(root, environment)  # a worker runs no other thread


def _analyse(job: Job, told: set[str]) -> Done | None:
    """``job``'s analysis, with which files mention the words it looked up that no module before
    it in its unit of work told (``told``: the session takes a unit's results in their order)."""
    from fabric_lsp.documents.cache import answers

    analyzers = _STATE["analyzers"]
    try:
        with analyzers.workspace.recording() as recorder:
            analysis = check.analysis(analyzers.for_config(job.config), job.config, job.text, job.path)
    except Exception:  # the server analyses it again itself, and reports what went wrong
        return None
    deps = recorder.freeze()
    return Done(job.text, tuple(analysis.findings), deps, answers(analyzers.workspace, deps.mentions, told))


def _analyse_chunk(jobs: list[Job]) -> list[Done | None]:
    told: set[str] = set()
    return [_analyse(job, told) for job in jobs]


class Workers:
    """Worker processes analysing modules, results asked for by path; :meth:`chunks` tells which
    paths each unit of work holds, to report them in the order they are done."""

    def __init__(
        self, root: str | None, environment: str | None, log: Callable[[str], None], fork: bool = False
    ) -> None:
        """``fork``: fork the workers from this process where it may (:func:`_forking`)."""
        self.root, self.environment, self.log = root, environment, log
        self.fork = fork
        self._pool: ProcessPoolExecutor | None = None
        self._pending: dict[str, tuple[Future, int, Job]] = {}
        self._chunks: list[tuple[Future, list[str]]] = []

    def submit(self, jobs: Sequence[Job], workers: int) -> None:
        """Start analysing ``jobs``; nothing when there are too few to pay for the workers. Workers
        already under way (a head start, :mod:`fabric_lsp.lsp.head_start`) keep the jobs they were
        given that are among ``jobs`` unchanged, forget the others, and take the rest."""
        if self._pool is not None:
            self._keep_only(jobs)
            fresh = [job for job in jobs if job.path not in self._pending]
            self.log(f"fabric-lsp: {len(self._pending)} modules under way since the server started, {len(fresh)} more")
            self._submit_chunks(fresh, workers)
            return
        workers = min(workers, len(jobs))
        if workers < 2 or len(jobs) < MIN_MODULES:
            return
        self.log(f"fabric-lsp: analysing {len(jobs)} modules in {workers} worker processes")
        versions = versions_for(job.config for job in jobs)  # here, before the workers start
        try:
            self._pool = ProcessPoolExecutor(
                workers, _forking(self.fork), initializer=_start, initargs=(self.root, self.environment, versions)
            )
        except OSError as exc:
            self.log(f"fabric-lsp: worker processes did not start ({exc}); analysing on one thread")
            self.close()
            return
        self._submit_chunks(jobs, workers)

    def _submit_chunks(self, jobs: Sequence[Job], workers: int) -> None:
        pool = self._pool
        if pool is None:
            return
        try:
            for part in chunks([expected_cost(job.text) for job in jobs], workers):
                chunk = list(jobs[part.start : part.stop])
                future = pool.submit(_analyse_chunk, chunk)
                self._chunks.append((future, [job.path for job in chunk]))
                self._pending.update((job.path, (future, i, job)) for i, job in enumerate(chunk))
        except (OSError, RuntimeError) as exc:  # RuntimeError: a pool shut down or broken meanwhile
            self.log(f"fabric-lsp: worker processes did not start ({exc}); analysing on one thread")
            self.close()

    def _keep_only(self, jobs: Sequence[Job]) -> None:
        """Forget the submitted jobs that are not among ``jobs`` as they are (their results are
        never asked for), and the units of work left with none of theirs."""
        wanted = {job.path: job for job in jobs}
        self._pending = {path: p for path, p in self._pending.items() if wanted.get(path) == p[2]}
        kept = []
        for future, paths in self._chunks:
            paths = [path for path in paths if path in self._pending and self._pending[path][0] is future]
            if paths:
                kept.append((future, paths))
            else:
                future.cancel()
        self._chunks = kept

    def chunks(self) -> list[tuple[Future, list[str]]]:
        """Each unit of work submitted (its future) and the paths it analyses, most costly first."""
        return list(self._chunks)

    def result(self, path: str, text: str) -> Done | None:
        """The analysis of ``path`` as submitted, if it was and the text is still ``text``."""
        pending = self._pending.pop(path, None)
        if pending is None:
            return None
        future, index, _ = pending
        try:
            done = future.result()[index]
        except (BrokenProcessPool, OSError) as exc:
            if self._pool is not None:
                self.log(f"fabric-lsp: worker processes failed ({type(exc).__name__}: {exc}); analysing on one thread")
            self.close()
            return None
        except CancelledError:
            return None
        return done if done is not None and done.text == text else None

    def close(self) -> None:
        for future, _ in self._chunks:
            future.cancel()
        self._pending, self._chunks = {}, []
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
