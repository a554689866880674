"""Checking files for ``fabric-lsp check``: each file through the entry of its kind
(:mod:`fabric_lsp.documents.check`), fixes and diffs, and the worker processes of ``--jobs``."""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import pickle
import signal
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable

from fabric_lsp.cli.discover import Task
from fabric_lsp.cli.files import read_source, write_atomic
from fabric_lsp.documents import check
from fabric_lsp.documents.cache import PYTHON_FILES, Cache, Entry, answers, file_key
from fabric_lsp.documents.pool import (
    Affinity,
    Versions,
    chunks,
    expected_cost,
    import_preload,
    recall_versions,
    versions_for,
)
from fabric_lsp.engine.collector import gc_paused
from fabric_lsp.engine.workspace.dependencies import Dependencies

if TYPE_CHECKING:
    from fabric_lsp.cli.forked import Channel
    from fabric_lsp.config import Config
    from fabric_lsp.documents.analyzers import Analyzers


#: A progress bar is shown (on a terminal) when more files than this are checked.
PROGRESS_THRESHOLD = 300


#: Fewer candidate files (files the engine's pre-filter keeps) than this are checked in-process:
#: the workers would cost more than they save (each parses and looks up for itself the modules
#: its files import, and the engine is imported before they are forked).
MIN_FILES_FOR_POOL = 24


@dataclass(frozen=True)
class Mode:
    fix: bool = False
    diff: bool = False
    unsafe: bool = False
    #: the run keeps a cache: each result tells what its analysis found of the project's words
    #: (:func:`~fabric_lsp.documents.cache.answers`)
    answers: bool = False


# Per-process state: each worker (and the main process, when checking in-process) builds its
# Workspace once, at its first analysis, and one Analyzer per distinct set of enabled rules.
_STATE: dict = {}


def init_state(root: str, environment: str | None, also_checked: frozenset[str] = frozenset()) -> None:
    """Where this process's analyses run; the workspace is made (and the engine imported) only
    when a file needs an analysis (:func:`analyzers`). ``also_checked``: the Python files the run
    checks (a batch script leaves their findings to them), in the workers too."""
    debug = bool(os.environ.get("FABRIC_LSP_DEBUG"))
    _STATE.clear()
    _STATE["root"], _STATE["environment"] = root, environment
    _STATE["also_checked"] = also_checked
    _STATE["log"] = (lambda m: print(m, file=sys.stderr)) if debug else (lambda m: None)


def _keep_state(root: str, environment: str | None, also_checked: frozenset[str]) -> None:
    """This run's state, keeping the workspace this process has (read ahead, or inherited from the
    process that forked it) where it is of the same project and environment."""
    if (_STATE.get("root"), _STATE.get("environment")) == (root, environment):
        _STATE["also_checked"] = also_checked
    else:
        init_state(root, environment, also_checked)


def analyzers() -> Analyzers:
    """This process's analyzers over its workspace, made at the first call."""
    if "analyzers" not in _STATE:
        from fabric_lsp.documents.analyzers import for_one_run

        _STATE["analyzers"] = for_one_run(_STATE["root"], _STATE["environment"], _STATE["log"])
    return _STATE["analyzers"]


def analyzer_for(config):
    return analyzers().for_config(config)


def _needs_analysis(text: str, path: str | None, config: Config) -> bool:
    """Whether checking ``text`` needs the engine: a notebook or a batch script always (their
    programs are found in them first), a module only where a rule's prefilter lets it through."""
    from fabric_lsp.rules.prefilters import may_have_findings  # the rules' words, for a file the cache does not hold

    return check.kind_of(path) is not check.Kind.MODULE or may_have_findings(text, config.enabled_codes)


def check_text(
    text: str,
    path: str | None,
    shown: str,
    config,
    mode: Mode,
    bom: bool = False,
    write: bool = True,
    named: bool = True,
):
    """Check (and with ``mode.fix`` fix) one source text; returns a FileResult, with what its
    analysis looked up (``deps``, for the cache). An empty file gets a note only when it was
    ``named`` (on the command line, or standard input)."""
    if not _needs_analysis(text, path, config):
        return unanalysed(text, path, shown, mode, write, named)
    with analyzers().workspace.recording() as recorder:
        result = _check_text(text, path, shown, config, mode, bom, write, named)
    deps = recorder.freeze()
    if path is not None and check.kind_of(path) is check.Kind.BATCH_SCRIPT:  # it reads the files it launches whole
        deps = replace(deps, listings=deps.listings | {PYTHON_FILES})
    result.deps = deps
    if mode.answers:
        result.mentioned = answers(analyzers().workspace, deps.mentions, _STATE.setdefault("answered", set()))
    return result


def unanalysed(text: str, path: str | None, shown: str, mode: Mode, write: bool = True, named: bool = True):
    """The result of a module no enabled rule looks at (no rule's prefilter lets it through):
    what its analysis would give (no finding, nothing fixed, nothing looked up), without one."""
    result = _module_result(text, path, shown, mode, write, named)
    result.deps = Dependencies()
    return result


def _module_result(text: str, path: str | None, shown: str, mode: Mode, write: bool, named: bool):
    """A module's result before its analysis (an empty file's, or one with no finding)."""
    from fabric_lsp.cli.output import FileResult

    result = FileResult(path or "-", shown, text=text, checked=True)
    if text.strip() == "" and named:
        result.problems.append(f"{shown}: note: empty file, nothing to check")
    if not write and mode.fix:
        result.fixed_text = text
    return result


def _check_text(text: str, path: str | None, shown: str, config, mode: Mode, bom: bool, write: bool, named: bool):
    kind = check.kind_of(path)
    if kind is check.Kind.NOTEBOOK:
        from fabric_lsp.cli.notebooks import check_notebook

        return check_notebook(analyzer_for(config), text, path, shown, config, mode, bom, write)
    if kind is check.Kind.BATCH_SCRIPT and path is not None:
        return check_batch_script(text, path, shown, config, mode, write)
    result = _module_result(text, path, shown, mode, write, named)
    if text.strip() == "":
        return result
    analyzer = analyzer_for(config)
    try:
        if mode.fix or mode.diff:
            from fabric_lsp.engine.fixer import fix_text

            fixed = fix_text(text, analyzer, path, unsafe=mode.unsafe)
            if not write and mode.fix:
                result.fixed_text = fixed.text
            if fixed.text != text:
                if mode.diff:
                    import difflib

                    result.diff = "".join(
                        difflib.unified_diff(
                            text.splitlines(keepends=True),
                            fixed.text.splitlines(keepends=True),
                            fromfile=f"a/{shown}",
                            tofile=f"b/{shown}",
                        )
                    )
                else:
                    if write and path is not None:
                        write_atomic(path, fixed.text, bom)
                    result.fixed = fixed.applied
                    text = result.text = fixed.text
            findings = (
                config.apply(fixed.remaining)
                if not mode.diff
                else check.analysis(analyzer, config, text, path).findings
            )
        else:
            findings = check.analysis(analyzer, config, text, path).findings
    except Exception as exc:  # an internal error in one file is reported, the rest still checked
        result.problems.append(f"{shown}: error: internal error while checking ({type(exc).__name__}: {exc})")
        result.fixed_text = None if not mode.fix or write else text
        return result
    result.findings = findings
    return result


def check_batch_script(text: str, path: str, shown: str, config, mode: Mode, write: bool = True):
    """A batch-job script (``*.sh``, ``*.sbatch``, ``*.slurm``): the findings of the Python files it
    launches that concern it (FAB010), on its lines. A file the same run checks already carries
    the finding (with the script's line as related information) and is not repeated here. A shell
    script that launches no Python through SLURM, ``torchrun`` or ``fabric run`` is not counted as
    checked. Nothing is fixed in a script."""
    from fabric_lsp.cli.output import FileResult
    from fabric_lsp.engine.program.batch_scripts import parse

    result = FileResult(path, shown, text=text, checked=parse(text, path) is not None)
    if mode.fix and not write:
        result.fixed_text = text
    if not result.checked:
        return result
    try:
        analysis = check.analysis(analyzer_for(config), config, text, path, _STATE.get("also_checked", frozenset()))
    except Exception as exc:  # one script's internal error is reported, the rest still checked
        result.problems.append(f"{shown}: error: internal error while checking ({type(exc).__name__}: {exc})")
        return result
    result.findings = analysis.findings
    return result


def _check_task(task: Task, mode: Mode):
    from fabric_lsp.cli.output import FileResult

    text, problem, bom = read_source(task.path)
    if text is None:
        return FileResult(task.path, task.shown, problems=[f"{task.shown}: error: {problem}"])
    return check_text(text, task.path, task.shown, task.config, mode, bom, named=task.named)


def _check_chunk(args) -> list:
    tasks, mode = args
    return [_check_task(t, mode) for t in tasks]


def _progress(total: int):
    """A tqdm bar on stderr when it is a terminal and there are many files; else None."""
    if total <= PROGRESS_THRESHOLD or not sys.stderr.isatty() or os.environ.get("FABRIC_LSP_NO_PROGRESS"):
        return None
    try:
        import tqdm
    except ImportError:
        return None
    import shutil

    try:
        cols, rows = os.get_terminal_size(sys.stderr.fileno())
    except OSError:
        cols = rows = 0
    if cols <= 0 or rows <= 0:  # a terminal that reports no size (some CI ptys): tqdm would print nothing
        cols, rows = shutil.get_terminal_size((80, 24))
    tqdm.tqdm.monitor_interval = 0  # no monitor thread (workers are forked)
    return tqdm.tqdm(
        total=total, unit="file", desc="fabric-lsp", file=sys.stderr, leave=False, ncols=cols, nrows=rows or 24
    )


def run_tasks(
    tasks: list[Task],
    mode: Mode,
    root: str,
    environment: str | None,
    jobs: int,
    cache: Cache | None = None,
    forker: Forker | None = None,
) -> list:
    """Check every task; results in task order.

    Files are read here first: those the cache holds unchanged, and those the engine's pre-filter
    dismisses (most files of a project), are done at once; only the rest is spread over ``jobs``
    worker processes, when there are enough of them to pay for starting the workers. With a
    ``forker`` (:class:`Forker`, started before the project was walked), every analysis runs in it
    or in the workers it forks, and this process never imports the engine. With a ``cache``
    (never while fixing), the results are kept in it.
    """
    bar = _progress(len(tasks))
    # a batch script's findings are those of the Python files it launches, reported there
    # already when the run checks those files too
    init_state(root, environment, frozenset(t.path for t in tasks if t.path.endswith((".py", ".pyi"))))
    results: list = [None] * len(tasks)
    sources = _read_all(tasks, results)
    keys: dict[int, str] = {}
    if cache is not None:
        mode = replace(mode, answers=True)
        cache.world.texts.update({tasks[i].path: text for i, (text, _) in sources.items()})
    meanwhile = cache.world.prepare if cache is not None else None
    try:
        if forker is not None:
            forker.begin(mode)
        candidates = _settle(tasks, sources, results, keys, mode, cache, bar, forker)
        jobs = max(1, min(jobs, len(candidates)))
        pooled = jobs > 1 and len(candidates) >= MIN_FILES_FOR_POOL
        costs = [expected_cost(sources[i][0]) for i in candidates] if pooled else []
        if forker is not None and (candidates or forker.handed):
            answered = forker.check([(i, tasks[i]) for i in candidates], jobs if pooled else 1, costs, bar, meanwhile)
            for i, r in answered.items():
                results[i] = r
        elif pooled:
            done = _run_pool([tasks[i] for i in candidates], mode, jobs, bar, costs, meanwhile)
            for i, r in zip(candidates, done or []):
                results[i] = r
        for i, (text, bom) in sources.items():  # in this process: no workers, or they failed
            if results[i] is None:
                t = tasks[i]
                results[i] = check_text(text, t.path, t.shown, t.config, mode, bom, named=t.named)
                if bar is not None:
                    bar.update(1)
        if cache is not None:
            _keep(cache, tasks, results, keys)
        return results
    finally:
        if bar is not None:
            bar.close()


def _settle(
    tasks: list[Task],
    sources: dict,
    results: list,
    keys: dict[int, str],
    mode: Mode,
    cache: Cache | None,
    bar,
    forker: Forker | None,
) -> list[int]:
    """Give a result at once to every task that needs no worker: those the cache holds unchanged,
    the modules no enabled rule looks at (no analysis), and the notebooks and batch scripts no
    rule's prefilter lets through (checked before the workers are forked: here, or handed to the
    ``forker``); returns the indices of the others, in order."""
    candidates: list[int] = []
    for i, (text, bom) in list(sources.items()):
        t = tasks[i]
        if cache is not None:
            keys[i] = _key(t, text)
            entry = cache.get(t.path, keys[i])
            if entry is not None:
                results[i] = _from_entry(t, text, entry)
        if results[i] is None and _worth_a_worker(text, t.config.enabled_codes):
            candidates.append(i)
            continue
        if results[i] is None and check.kind_of(t.path) is check.Kind.MODULE:  # no rule looks at it
            results[i] = unanalysed(text, t.path, t.shown, mode, named=t.named)
        elif results[i] is None and forker is not None:
            forker.first(i, t)
            continue
        elif results[i] is None:  # a notebook or batch script no prefilter lets through
            results[i] = check_text(text, t.path, t.shown, t.config, mode, bom, named=t.named)
        if bar is not None:
            bar.update(1)
    return candidates


def _worth_a_worker(text: str, codes: frozenset[str]) -> bool:
    """Whether a rule's prefilter lets ``text`` through (the rules' words, imported only for a
    file the cache does not hold)."""
    from fabric_lsp.rules.prefilters import may_have_findings

    return may_have_findings(text, codes)


def _read_all(tasks: list[Task], results: list) -> dict[int, tuple[str, bool]]:
    """The texts of the tasks (with their BOM), by index; a file that cannot be read gets its result."""
    from fabric_lsp.cli.output import FileResult

    sources: dict[int, tuple[str, bool]] = {}
    for i, t in enumerate(tasks):
        text, problem, bom = read_source(t.path)
        if text is None:
            results[i] = FileResult(t.path, t.shown, problems=[f"{t.shown}: error: {problem}"])
        else:
            sources[i] = (text, bom)
    return sources


def _key(task: Task, text: str) -> str:
    """The cache key of a task (a batch script's check also reads which files the run checks)."""
    if check.kind_of(task.path) is check.Kind.BATCH_SCRIPT:
        return file_key(text, task.config, task.named, sorted(_STATE.get("also_checked", ())))
    return file_key(text, task.config, task.named)


def _from_entry(task: Task, text: str, entry: Entry):
    from fabric_lsp.cli.output import FileResult

    result = FileResult(
        task.path,
        task.shown,
        text=text,
        findings=list(entry.findings),
        problems=list(entry.problems),
        checked=entry.checked,
    )
    if entry.findings and check.kind_of(task.path) is check.Kind.NOTEBOOK:  # to place them in its cells
        from fabric_lsp.documents.notebook import NotebookError, NotebookFile

        with contextlib.suppress(NotebookError):
            result.notebook = NotebookFile.parse(text)
    return result


def _keep(cache: Cache, tasks: list[Task], results: list, keys: dict[int, str]) -> None:
    """Put the results computed in this run into the cache (not those of an internal error)."""
    kept = [
        i
        for i, r in enumerate(results)
        if i in keys and r is not None and r.deps is not None and not any("internal error" in p for p in r.problems)
    ]
    for r in results:
        if r is not None and r.mentioned:
            cache.world.answered(r.mentioned)
    for i in kept:
        r = results[i]
        cache.put(tasks[i].path, keys[i], r.deps, r.findings, r.problems, r.checked)


def _preload() -> None:
    """Import what every analysis needs, once, before the workers are forked (each would import
    it for itself otherwise), and jedi where the analysed environment is another interpreter
    (every worker looks its modules up with jedi)."""
    from fabric_lsp.engine.workspace.files import analysed_environment

    with contextlib.suppress(ImportError):
        import_preload()
        if analysed_environment(_STATE["root"], _STATE["environment"]) is not None:
            importlib.import_module("jedi")


def _run_pool(
    tasks: list[Task], mode: Mode, jobs: int, bar, costs: list[int], meanwhile: Callable[[], None] | None = None
) -> list | None:
    """Check ``tasks`` in ``jobs`` worker processes (:func:`_pooled`), results in task order; None
    when the workers fail. ``meanwhile`` runs on a thread of this process while the workers
    analyse (once they are forked: a forked process has no thread but the one that forked it)."""
    import threading

    results: list = [None] * len(tasks)
    done = 0
    thread = threading.Thread(target=meanwhile, daemon=True) if meanwhile is not None else None
    try:
        for part, chunk in _pooled(tasks, mode, jobs, costs, thread):
            results[part.start : part.stop] = chunk
            done += len(chunk)
            if bar is not None:
                bar.update(len(chunk))
    except OSError as exc:
        print(_failed(exc), file=sys.stderr)
        if bar is not None:
            bar.update(-done)
        return None
    finally:
        if thread is not None and thread.is_alive():
            thread.join()
    return results


def _failed(exc: BaseException) -> str:
    return f"fabric-lsp: warning: parallel check failed ({type(exc).__name__}: {exc}); checking in one process"


def _pooled(tasks: list[Task], mode: Mode, jobs: int, costs: list[int], thread=None):
    """Check ``tasks`` in ``jobs`` worker processes forked from this one; yields each chunk's
    range and results as they come. The tasks go in chunks of neighbouring files (which import the
    same modules, so a worker parses and looks them up once), the chunks most costly first
    (``costs``, :func:`~fabric_lsp.documents.pool.chunks`): a worker that is done takes the next,
    and a chunk holding a long file is not left for last while the other workers have nothing to
    do. ``thread`` is started once the workers are forked. On Linux the workers are forked from
    this process (cheap: the engine is imported; safe: the command line runs no thread), each
    handed a chunk by its index (:mod:`fabric_lsp.cli.forked`); elsewhere they are spawned."""
    order = chunks(costs, jobs)
    _STATE["log"](f"fabric-lsp: checking {len(tasks)} files in {jobs} worker processes")
    state = (_STATE["root"], _STATE["environment"], _STATE["also_checked"])
    if not sys.platform.startswith("linux"):
        yield from _spawned(tasks, mode, jobs, order, state, thread)
        return
    from fabric_lsp.cli import forked

    _preload()

    def work(k: int) -> tuple[list, list[str]]:  # with the files the worker has parsed by then
        return _check_chunk((tasks[order[k].start : order[k].stop], mode)), analyzers().workspace.parsed_paths()

    affinity = Affinity(order, [t.path for t in tasks], costs)
    started = thread.start if thread is not None else lambda: None
    run = forked.run(len(order), jobs, work, start=lambda: _keep_state(*state), forked=started, pick=affinity.pick)
    for k, (chunk, parsed) in run:
        affinity.parsed[k] = frozenset(parsed)
        yield order[k], chunk


def _spawned(tasks: list[Task], mode: Mode, jobs: int, order: list[range], state: tuple, thread=None):
    """:func:`_pooled` in spawned worker processes (where there is no fork); OSError where one
    of them died."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    versions = versions_for(t.config for t in tasks)  # here, once: not read again in each worker
    try:
        with ProcessPoolExecutor(
            max_workers=jobs,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_spawned_start,
            initargs=(state, versions),
        ) as pool:
            chunks_done = pool.map(_check_chunk, [(tasks[part.start : part.stop], mode) for part in order])
            if thread is not None:
                thread.start()
            yield from zip(order, chunks_done)
    except BrokenProcessPool as exc:
        raise OSError(str(exc)) from exc


def _spawned_start(state: tuple, versions: Versions) -> None:
    """A spawned worker's start: the Lightning versions the process that started it worked out
    (as the forker's workers and the server's have them), then the run's state (:func:`init_state`)."""
    recall_versions(versions)
    init_state(*state)


class Forker:
    """A process forked as a check of several files begins, before the project is walked: it
    imports the engine while this process walks, reads and pre-filters the project (each takes
    about 0.07 s on litgpt), and checks the files it is handed — first the notebooks and batch
    scripts checked before the workers fork (:func:`_settle`: handed one by one as they are met),
    then the rest, in workers it forks from itself where there are enough (:func:`_pooled`).
    Whenever it waits for its next message, it reads ahead (:func:`_read_ahead`). Results come
    back through a pipe, once this process has handed it everything (neither then waits on a full
    pipe while the other writes). Linux only (it forks); where it fails, this process checks what
    it has not answered."""

    def __init__(self, pid: int, channel: Channel) -> None:
        self.pid, self._channel = pid, channel
        self.handed = 0  # the tasks handed to it to check first
        self._answered = False  # it sent its last result (it then exits by itself)
        self._failure: BaseException | None = None  # why it could not check what it was handed

    @classmethod
    def start(cls, root: str, environment: str | None) -> Forker | None:
        """Fork it, for a run from ``root`` that analyses for ``environment``."""
        if not hasattr(os, "fork") or not sys.platform.startswith("linux"):
            return None
        from fabric_lsp.cli.forked import fork_piped

        return cls(*fork_piped(functools.partial(_forker_main, root=root, environment=environment)))

    def begin(self, mode: Mode) -> None:
        """Hand it this run's state (:func:`init_state`'s) and ``mode``."""
        self._hand((_STATE["root"], _STATE["environment"], _STATE["also_checked"], mode))

    def first(self, i: int, task: Task) -> None:
        """Hand it task ``i``, to check before it forks any worker."""
        self._hand((i, task))
        self.handed += 1

    def _hand(self, message) -> None:
        if self._failure is None:
            try:
                self._channel.send(message)
            except OSError as exc:  # it is gone: this process checks what it was handed
                self._failure = exc

    def check(self, candidates: list[tuple[int, Task]], jobs: int, costs: list[int], bar, meanwhile) -> dict:
        """Hand it the ``candidates`` (index, task), to check in ``jobs`` workers (1: none); the
        results it gives, by index (those handed first among them); ``meanwhile`` runs on a thread
        until it is done."""
        import threading

        results: dict = {}
        self._hand((candidates, jobs, costs, versions_for(t.config for _, t in candidates)))
        thread = threading.Thread(target=meanwhile, daemon=True) if meanwhile is not None else None
        if thread is not None:
            thread.start()
        try:
            while self._failure is None and (answer := self._channel.receive()) is not None:
                if isinstance(answer, str):
                    raise OSError(answer)
                for i, result in answer:
                    results[i] = result
                if bar is not None:
                    bar.update(len(answer))
            self._answered = self._failure is None
        except (OSError, EOFError, pickle.UnpicklingError) as exc:
            self._failure = exc
        finally:
            if thread is not None and thread.is_alive():
                thread.join()
        if self._failure is not None:
            print(_failed(self._failure), file=sys.stderr)
        return results

    def close(self) -> None:
        """End the forker (at once where it has not answered everything: it was handed nothing,
        failed, or this process stops) and wait for it."""
        if not self._answered:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
        self._channel.close()
        with contextlib.suppress(OSError, ChildProcessError):
            os.waitpid(self.pid, 0)


def _forker_main(channel: Channel, root: str, environment: str | None) -> None:
    """The forker's life (:func:`~fabric_lsp.cli.forked.fork_piped`): import the engine, read ahead
    what the analyses of the project at ``root`` read first while this process walks it, check
    what it is handed."""
    with contextlib.suppress(ImportError):
        import_preload()
        init_state(root, environment)
        _read_ahead(channel)
    _forked_check(channel)


def _read_ahead(channel: Channel) -> None:
    """In the forker, until the check's process hands it its next message: what every worker it
    forks would read first (the project's words, the modules most of it imports), read once here
    for all of them, from where it stopped reading ahead before (it waits for each message of the
    run's beginning: its state, the files to check first, the others)."""
    # what it reads stays to the end of the run, in the workers too: frozen
    with contextlib.suppress(ImportError), gc_paused(freeze=True):
        ahead = _ahead()
        while not channel.waiting() and next(ahead, None) is not None:
            pass


def _ahead() -> Iterator[str]:
    """The reading ahead (:meth:`~fabric_lsp.engine.workspace.workspace.Workspace.reading_ahead`)
    of this run's workspace, made at the first call (:func:`init_state` drops it)."""
    if "ahead" not in _STATE:
        _STATE["ahead"] = analyzers().workspace.reading_ahead()
    return _STATE["ahead"]


def _forked_check(channel: Channel) -> None:
    """In the forker: the state, the tasks to check first (checked as they come), then the others
    (in workers forked from here); the results go back once they are all handed. It reads ahead
    whenever it waits for a message."""
    root, environment, also_checked, mode = channel.receive()
    _keep_state(root, environment, also_checked)
    _preload()  # and jedi, where the analysed environment is another interpreter
    done = []
    _read_ahead(channel)
    while len(message := channel.receive()) == 2:  # (index, task), until (candidates, jobs, costs, versions)
        i, task = message
        done.append((i, _check_task(task, mode)))
        _read_ahead(channel)
    candidates, jobs, costs, versions = message
    recall_versions(versions)  # before the workers fork: neither they nor this process read them again
    channel.send(done)
    if jobs > 1:
        try:
            for part, chunk in _pooled([t for _, t in candidates], mode, jobs, costs):
                channel.send([(candidates[j][0], r) for j, r in zip(part, chunk)])
        except OSError as exc:  # the forker forks its workers (Linux): a worker failed
            channel.send(f"{type(exc).__name__}: {exc}")
            return
    else:
        for i, task in candidates:
            channel.send([(i, _check_task(task, mode))])
    channel.send(None)
