"""Worker processes forked from the check's process (``fabric_lsp.cli.forked``): every item is
worked on once, in a forked worker, each worker started once; a worker that fails or dies ends the
run with an OSError (the caller then checks the files itself), and no worker outlives the run."""

from __future__ import annotations

import fcntl
import os
import sys

import pytest
from fabric_lsp.cli import forked

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked workers are Linux's")


def _gone(pid: int) -> bool:
    """Whether ``pid`` was waited for (it is no child of this process any more)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_every_item_is_worked_on_once_in_a_forked_worker_started_once():
    started: list[int] = []
    calls: list[str] = []
    parent = os.getpid()

    def start() -> None:
        started.append(os.getpid())  # in the worker's own copy of the list

    def work(i: int) -> tuple[int, int, int]:
        return i * i, os.getpid(), len(started)

    results = dict(forked.run(9, 3, work, start, lambda: calls.append("forked")))
    assert calls == ["forked"] and started == []  # nothing started in this process
    assert sorted(results) == list(range(9))
    assert all(square == i * i for i, (square, _, _) in results.items())
    pids = {pid for _, pid, _ in results.values()}
    assert parent not in pids and 1 <= len(pids) <= 3
    assert {n for _, _, n in results.values()} == {1}  # each worker started once, before its work
    assert all(_gone(pid) for pid in pids)


def test_fewer_items_than_workers_fork_one_worker_per_item():
    pids = {pid for _, pid in forked.run(2, 8, lambda i: os.getpid(), lambda: None, lambda: None)}
    assert len(pids) <= 2 and os.getpid() not in pids
    assert list(forked.run(0, 4, lambda i: i, lambda: None, lambda: None)) == []


def test_a_worker_that_is_done_takes_the_item_pick_chooses():
    yielded: list[int] = []
    asked: list[tuple[list[int], list[int]]] = []

    def pick(done: list[int], pending: list[int]) -> int:
        assert set(done) <= set(yielded)  # the items it did, each yielded before it is handed more
        asked.append((list(done), list(pending)))
        return pending[-1]  # the last first

    for i, _ in forked.run(6, 2, lambda i: os.getpid(), lambda: None, lambda: None, pick=pick):
        yielded.append(i)
    assert sorted(yielded) == list(range(6))
    assert [pending[-1] for _, pending in asked] == [5, 4, 3, 2, 1, 0]
    assert asked[0] == ([], list(range(6))) and asked[1] == ([], list(range(5)))  # the two first hand-outs
    by_worker: dict[int, list[int]] = {}
    for done, _ in asked:
        if done:
            by_worker.setdefault(done[0], []).append(len(done))
    assert all(lengths == sorted(lengths) for lengths in by_worker.values())  # each worker's own, growing


@pytest.mark.parametrize("how", ["raises", "dies"])
def test_a_worker_that_fails_ends_the_run_and_no_worker_outlives_it(how, capfd):
    pids: list[int] = []

    def work(i: int) -> int:
        if i == 3:
            if how == "dies":
                os._exit(3)
            raise ValueError("boom")
        return os.getpid()

    with pytest.raises(OSError, match="failed: ValueError: boom" if how == "raises" else "exited"):
        for _, pid in forked.run(8, 2, work, lambda: None, lambda: None):
            pids.append(pid)
    assert all(_gone(pid) for pid in set(pids))
    if how == "raises":
        assert "ValueError: boom" in capfd.readouterr().err  # the worker's traceback, for a bug report


def test_a_run_stopped_early_stops_its_workers():
    import time

    def work(i: int) -> int:
        if i > 0:
            time.sleep(30)  # still working when the run is stopped
        return os.getpid()

    run = forked.run(4, 2, work, lambda: None, lambda: None)
    first = next(run)
    started = time.monotonic()
    run.close()
    assert time.monotonic() - started < 5  # killed, not waited out
    assert _gone(first[1])


def _channels() -> tuple[forked.Channel, forked.Channel]:
    """Both ends of a pair of pipes, as a forked process and its parent hold them."""
    down, up = os.pipe(), os.pipe()
    return forked.Channel(down[0], up[1]), forked.Channel(up[0], down[1])


@pytest.mark.parametrize("size", [10, 300_000])  # one frame of a pickle, or several
def test_a_channel_reads_one_message_and_leaves_the_next_one_for_waiting_to_see(size):
    # a buffered reader takes the start of the next message along with this one: the pipe is
    # then empty, and `waiting()` (a selector on it) would miss the message that came
    ours, theirs = _channels()
    fcntl.fcntl(ours.fileno, fcntl.F_SETPIPE_SZ, 1 << 20)  # both messages fit in the pipe: sent at once
    first, second = ["x" * size, 1], {"state": "y" * size}
    try:
        theirs.send(first)
        theirs.send(second)
        assert ours.receive() == first
        assert ours.waiting()
        assert ours.receive() == second
        assert not ours.waiting()
        theirs.close()
        assert ours.waiting()  # the other end closed: reading does not wait
        with pytest.raises(EOFError):
            ours.receive()
    finally:
        ours.close()
