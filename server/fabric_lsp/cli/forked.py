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
import select
import signal
import sys
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

#: what a worker sends back in place of a result when its work raised (the error, as text)
_FAILED = "failed"


#: ``pick(the items a worker did, the items not handed yet)``: which of them it takes next
Pick = Callable[[list[int], list[int]], int]


def run(
    items: int,
    workers: int,
    work: Callable[[int], Any],
    start: Callable[[], None],
    forked: Callable[[], None],
    pick: Pick | None = None,
) -> Iterator[tuple[int, Any]]:
    """Do ``work(i)`` for each ``i`` below ``items`` in ``workers`` forked processes, each of which
    calls ``start()`` first; yields ``(i, result)`` in the order they are done. A worker takes the
    item ``pick(the items it did, those not handed yet)`` chooses (default: the lowest), once the
    result of its last one is yielded. ``forked`` is called once every worker is forked (a thread
    may start then). OSError where a worker fails or exits early (the remaining workers are
    stopped)."""
    pool = _Pool(min(workers, items), start, work)
    choose = pick or (lambda done, pending: pending[0])
    try:
        forked()
        pending = list(range(items))
        for worker in pool.workers:
            pool.hand(worker, _next(pending, choose, worker.done))
        while pool.busy():
            for worker in pool.ready():
                i, result = worker.take()
                worker.done.append(i)
                yield i, result
                pool.hand(worker, _next(pending, choose, worker.done))
    finally:
        pool.close()


def _next(pending: list[int], pick: Pick, done: list[int]) -> int | None:
    if not pending:
        return None
    item = pick(done, pending)
    pending.remove(item)
    return item


class Channel:
    """One end of a forked process's two pipes. Messages are pickled by one pickler, and read by
    one unpickler, for the whole run: an object sent again (the configuration every task holds)
    crosses as a reference to the first. A message is read exactly (:class:`_Exact`): whether
    the next one has come is what the pipe says (:meth:`waiting`, a selector on ``fileno``)."""

    def __init__(self, read: int, write: int) -> None:
        self._in = _Exact(read)
        self._out = os.fdopen(write, "wb")
        self._pickler = pickle.Pickler(self._out, pickle.HIGHEST_PROTOCOL)
        self._unpickler = pickle.Unpickler(self._in)
        self.fileno = read

    def send(self, message) -> None:
        self._pickler.dump(message)
        self._out.flush()

    def receive(self):
        """The next message; EOFError where the other end closed first."""
        return self._unpickler.load()

    def waiting(self) -> bool:
        """Whether a message (or the end of the other side) can be read without waiting."""
        return bool(select.select([self.fileno], [], [], 0)[0])

    def close(self) -> None:
        for end in (self._out, self._in):
            with contextlib.suppress(OSError):
                end.close()


class _Exact:
    """The read end of a pipe, read for the unpickler without buffering: a buffered reader would
    take the start of the next message along with the end of this one, where no selector sees it.
    The unpickler reads a message's frames whole, so this costs a few reads per message."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def read(self, n: int) -> bytes:
        """``n`` bytes, fewer only where the other end closed first."""
        parts = []
        while n > 0 and (part := os.read(self._fd, n)):
            parts.append(part)
            n -= len(part)
        return b"".join(parts)

    def readline(self) -> bytes:
        """A line: the unpickler requires the method, though no message of the pickle protocol the
        channels send is read by lines."""
        line = b""
        while not line.endswith(b"\n") and (byte := os.read(self._fd, 1)):
            line += byte
        return line

    def close(self) -> None:
        os.close(self._fd)


def fork_piped(child: Callable[[Channel], None]) -> tuple[int, Channel]:
    """Fork a process joined to this one by two pipes, which runs ``child`` on its end of them and
    exits (:func:`_life`); here: its pid and this process's end."""
    down_r, down_w = os.pipe()  # this process -> the child
    up_r, up_w = os.pipe()  # the child -> this process
    pid = os.fork()
    if pid == 0:
        os.close(down_w)
        os.close(up_r)
        _life(lambda: child(Channel(down_r, up_w)))
    os.close(down_r)
    os.close(up_w)
    return pid, Channel(up_r, down_w)


def _life(body: Callable[[], None]) -> NoReturn:
    """A forked process's life: ``body()``, then exit without returning into the code that forked
    it — 0 where it ran to its end, 1 where the parent is gone, the user stopped the run, or it
    failed (with its traceback on stderr)."""
    code = 1
    try:
        body()
        code = 0
    except (EOFError, OSError, KeyboardInterrupt):
        pass  # the parent is gone, or the user stopped the run
    except BaseException:  # noqa: BLE001 - the parent reports the exit; this says why
        import traceback

        traceback.print_exc()
    finally:
        with contextlib.suppress(BaseException):
            sys.stderr.flush()
        os._exit(code)


class _Worker:
    """The parent's end of one worker: its pid, the item it is working on, its channel."""

    def __init__(self, pid: int, channel: Channel) -> None:
        self.pid, self.channel = pid, channel
        self.item: int | None = None
        self.done: list[int] = []  # the items it did

    def hand(self, item: int | None) -> None:
        """Hand it ``item`` (None: it is done and exits)."""
        self.item = item
        self.channel.send(item)

    def take(self) -> tuple[int, Any]:
        """Its result for the item it was handed (OSError where it failed or exited)."""
        try:
            kind, value = self.channel.receive()
        except (EOFError, pickle.UnpicklingError) as exc:
            raise OSError(f"worker process {self.pid} exited") from exc
        if kind == _FAILED:
            raise OSError(f"worker process {self.pid} failed: {value}")
        assert self.item is not None
        return self.item, value


class _Pool:
    def __init__(self, n: int, start: Callable[[], None], work: Callable[[int], Any]) -> None:
        import selectors

        self.workers: list[_Worker] = []
        self._selector = selectors.DefaultSelector()
        try:
            for _ in range(n):
                worker = self._fork(start, work)
                self.workers.append(worker)
                self._selector.register(worker.channel.fileno, selectors.EVENT_READ, worker)
        except OSError:
            self.close()
            raise

    def _fork(self, start: Callable[[], None], work: Callable[[int], Any]) -> _Worker:
        def serve(channel: Channel) -> None:
            for other in self.workers:  # the ends of the workers forked before it are not its own
                other.channel.close()
            _serve(channel, start, work)

        return _Worker(*fork_piped(serve))

    def hand(self, worker: _Worker, item: int | None) -> None:
        """Hand ``worker`` the next ``item``; None: it is done (and no longer waited on: it exits)."""
        worker.hand(item)
        if item is None:
            self._selector.unregister(worker.channel.fileno)

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
                    os.kill(worker.pid, signal.SIGKILL)
            worker.channel.close()
            with contextlib.suppress(OSError, ChildProcessError):
                os.waitpid(worker.pid, 0)


def _serve(channel: Channel, start: Callable[[], None], work: Callable[[int], Any]) -> None:
    """A worker's work: ``start()``, then each item it is handed until it is handed None; an item
    whose work raises is answered with the error (the parent then checks its files itself)."""
    start()
    while (item := channel.receive()) is not None:
        try:
            message = ("done", work(item))
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which checks it itself
            import traceback

            traceback.print_exc()
            message = (_FAILED, f"{type(exc).__name__}: {exc}")
        channel.send(message)


__all__ = ["Channel", "fork_piped", "run"]
