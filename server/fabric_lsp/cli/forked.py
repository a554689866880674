"""Worker processes forked from this one, each handed the next item of work as it finishes one:
what ``fabric-lsp check --jobs`` runs its chunks of files in, on Linux.

A forked worker already holds everything its parent had (the engine imported, the tasks listed),
so an item crosses as its index and only its result is pickled back. Unlike
:class:`concurrent.futures.ProcessPoolExecutor`, nothing here is imported before the workers
fork but :mod:`pickle` and :mod:`selectors` (the executor's :mod:`multiprocessing` takes ~25 ms,
on the path of every check), and no thread runs in the forking process.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

#: what a worker sends back in place of a result when its work raised (the error, as text)
_FAILED = "failed"


def run(
    items: int, workers: int, work: Callable[[int], Any], start: Callable[[], None], forked: Callable[[], None]
) -> Iterator[tuple[int, Any]]:
    """Do ``work(i)`` for each ``i`` below ``items`` in ``workers`` forked processes, each of which
    calls ``start()`` first; yields ``(i, result)`` in the order they are done. ``forked`` is called
    once every worker is forked (a thread may start then). OSError where a worker fails or exits
    early (the remaining workers are stopped)."""
    pool = _Pool(min(workers, items), start, work)
    try:
        forked()
        pending = list(range(items))[::-1]
        for worker in pool.workers:
            pool.hand(worker, pending.pop() if pending else None)
        while pool.busy():
            for worker in pool.ready():
                i, result = worker.take()
                yield i, result
                pool.hand(worker, pending.pop() if pending else None)
    finally:
        pool.close()


class _Worker:
    """The parent's end of one worker: the item it is working on, and its two pipes."""

    def __init__(self, pid: int, down: int, up: int) -> None:
        self.pid = pid
        self.item: int | None = None
        self._down = os.fdopen(down, "wb")
        self._up = os.fdopen(up, "rb")
        self.fileno = up

    def hand(self, item: int | None) -> None:
        """Hand it ``item`` (None: it is done and exits)."""
        self.item = item
        pickle.dump(item, self._down, pickle.HIGHEST_PROTOCOL)
        self._down.flush()

    def take(self) -> tuple[int, Any]:
        """Its result for the item it was handed (OSError where it failed or exited)."""
        try:
            kind, value = pickle.load(self._up)
        except (EOFError, pickle.UnpicklingError) as exc:
            raise OSError(f"worker process {self.pid} exited") from exc
        if kind == _FAILED:
            raise OSError(f"worker process {self.pid} failed: {value}")
        assert self.item is not None
        return self.item, value

    def close(self) -> None:
        for end in (self._down, self._up):
            with contextlib.suppress(OSError):
                end.close()


class _Pool:
    def __init__(self, n: int, start: Callable[[], None], work: Callable[[int], Any]) -> None:
        import selectors

        self.workers: list[_Worker] = []
        self._selector = selectors.DefaultSelector()
        try:
            for _ in range(n):
                worker = self._fork(start, work)
                self.workers.append(worker)
                self._selector.register(worker.fileno, selectors.EVENT_READ, worker)
        except OSError:
            self.close()
            raise

    def _fork(self, start: Callable[[], None], work: Callable[[int], Any]) -> _Worker:
        def serve(read: int, write: int) -> NoReturn:
            for other in self.workers:  # the ends of the workers forked before it are not its own
                other.close()
            _serve(read, write, start, work)

        return _Worker(*fork_piped(serve))

    def hand(self, worker: _Worker, item: int | None) -> None:
        """Hand ``worker`` the next ``item``; None: it is done (and no longer waited on: it exits)."""
        worker.hand(item)
        if item is None:
            self._selector.unregister(worker.fileno)

    def busy(self) -> bool:
        return any(worker.item is not None for worker in self.workers)

    def ready(self) -> list[_Worker]:
        """The busy workers whose result has come (or that exited)."""
        return [key.data for key, _ in self._selector.select()]

    def close(self) -> None:
        """Stop the workers still working (an error, or the consumer stopped early) and wait for
        each to exit."""
        self._selector.close()
        for worker in self.workers:
            if worker.item is not None:
                with contextlib.suppress(OSError):
                    os.kill(worker.pid, 9)
            worker.close()
            with contextlib.suppress(OSError, ChildProcessError):
                os.waitpid(worker.pid, 0)


def fork_piped(child: Callable[[int, int], NoReturn]) -> tuple[int, int, int]:
    """Fork a process joined to this one by two pipes, which runs ``child(read, write)`` on its
    ends and never returns; here: its pid, the end to write to it and the end to read from it."""
    down_r, down_w = os.pipe()  # this process -> the child
    up_r, up_w = os.pipe()  # the child -> this process
    pid = os.fork()
    if pid == 0:
        os.close(down_w)
        os.close(up_r)
        child(down_r, up_w)
    os.close(down_r)
    os.close(up_w)
    return pid, down_w, up_r


def _serve(read: int, write: int, start: Callable[[], None], work: Callable[[int], Any]) -> NoReturn:
    """A worker's life: ``start()``, then the work on each item it is handed until it is handed
    None; it exits without returning into the code that forked it."""
    code = 1
    try:
        down, up = os.fdopen(read, "rb"), os.fdopen(write, "wb")
        start()
        while (item := pickle.load(down)) is not None:
            try:
                message = ("done", work(item))
            except Exception as exc:  # noqa: BLE001 - reported to the parent, which checks it itself
                import traceback

                traceback.print_exc()
                message = (_FAILED, f"{type(exc).__name__}: {exc}")
            pickle.dump(message, up, pickle.HIGHEST_PROTOCOL)
            up.flush()
        code = 0
    except (EOFError, OSError, KeyboardInterrupt):
        pass  # the parent is gone, or the user stopped the check
    except BaseException:  # noqa: BLE001 - the parent reports the worker's exit; this says why
        import traceback

        traceback.print_exc()
    finally:
        with contextlib.suppress(BaseException):
            sys.stderr.flush()
        os._exit(code)


__all__ = ["fork_piped", "run"]
