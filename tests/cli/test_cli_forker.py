"""The process ``fabric-lsp check --jobs N`` forks before it walks the project (``checks.Forker``):
it imports the engine meanwhile and checks what it is handed; where it cannot, the check's own
process checks what it did not answer, with a warning, and the results are the same."""

from __future__ import annotations

import os
import signal
import sys

import pytest
from fabric_lsp.cli import checks
from fabric_lsp.cli.checks import Forker, Mode, run_tasks
from fabric_lsp.cli.discover import discover
from fabric_lsp.cli.forked import Channel
from fabric_lsp.cli.output import Report
from fabric_lsp.config import Resolver
from fabric_lsp.documents.cache import Cache, World
from fabric_lsp.engine.workspace.workspace import HUB_IMPORTERS

from tests.cli.test_cli_formats import CLEAN, DEEPSPEED
from tests.engine.workspace.test_read_ahead import _parsed
from tests.engine.workspace.test_read_ahead import _project as hub_project

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the forker is Linux's (it forks)")

SCRIPT = "#!/bin/bash\n#SBATCH --nodes=1\nsrun python m00.py\n"  # no rule's words: checked first


def _project(root, files: int):
    for i in range(files):
        (root / f"m{i:02}.py").write_text(DEEPSPEED if i % 4 == 0 else CLEAN)
    (root / "job.sh").write_text(SCRIPT)
    tasks = discover([str(root)], Resolver([], project_root=str(root)), Report()).tasks
    return tasks


def _findings(results) -> list:
    return [(r.shown, [(f.code, f.span.start.line) for f in r.findings], r.checked) for r in results]


@pytest.mark.parametrize("files", [30, 5])  # workers forked by the forker, or none
def test_the_forker_gives_the_results_of_one_process(tmp_path, capsys, files):
    tasks = _project(tmp_path, files)
    alone = run_tasks(tasks, Mode(), str(tmp_path), None, 1)
    forker = Forker.start(str(tmp_path), None)
    assert forker is not None
    try:
        forked = run_tasks(tasks, Mode(), str(tmp_path), None, 2, None, forker)
        assert "analyzers" not in checks._STATE  # this process analysed nothing: the forker did
    finally:
        forker.close()
    assert "parallel check failed" not in capsys.readouterr().err
    assert _findings(forked) == _findings(alone)
    assert sum(len(r.findings) for r in forked) == len(range(0, files, 4))
    with pytest.raises(ChildProcessError):  # it was waited for
        os.waitpid(forker.pid, os.WNOHANG)


@pytest.mark.parametrize("files", [30, 5])
def test_a_forker_that_died_leaves_its_files_to_this_process(tmp_path, capsys, files):
    tasks = _project(tmp_path, files)
    alone = run_tasks(tasks, Mode(), str(tmp_path), None, 1)
    forker = Forker.start(str(tmp_path), None)
    assert forker is not None
    os.kill(forker.pid, signal.SIGKILL)
    os.waitpid(forker.pid, 0)
    try:
        forked = run_tasks(tasks, Mode(), str(tmp_path), None, 2, None, forker)
    finally:
        forker.close()
    assert _findings(forked) == _findings(alone)
    assert "parallel check failed" in capsys.readouterr().err


def test_without_a_forker_the_workers_are_forked_from_this_process(tmp_path, capsys, monkeypatch):
    # the pool of platforms with no forker (and of callers that start none): the same results
    tasks = _project(tmp_path, 30)
    alone = run_tasks(tasks, Mode(), str(tmp_path), None, 1)
    monkeypatch.setenv("FABRIC_LSP_DEBUG", "1")
    pooled = run_tasks(tasks, Mode(), str(tmp_path), None, 2)
    assert _findings(pooled) == _findings(alone)
    err = capsys.readouterr().err
    assert "checking 30 files in 2 worker processes" in err and "parallel check failed" not in err


def test_a_forker_handed_nothing_is_ended_at_once(tmp_path):
    forker = Forker.start(str(tmp_path), None)
    assert forker is not None
    forker.close()  # before it has imported the engine: killed, not waited for
    with pytest.raises(ChildProcessError):
        os.waitpid(forker.pid, os.WNOHANG)


@pytest.mark.parametrize("jobs", [2, 1])  # in workers, or in this process
def test_the_analyses_tell_the_cache_which_files_mention_their_words(tmp_path, jobs):
    """A run that keeps a cache takes which files mention the words an analysis looked up from the
    analyses (each result tells those its process had not told yet): this process reads no file's
    words, and every entry's state is the one the project read afresh gives."""
    tasks = [t for t in _project(tmp_path, 30) if not t.path.endswith(".sh")]
    (tmp_path / "job.sh").unlink()  # no batch script: nothing else reads every file's digest
    (tmp_path / "helper.py").write_text("def make_fabric():\n    return None\n")  # words of another file
    cache = Cache(str(tmp_path / "cache"), str(tmp_path), None)
    forker = Forker.start(str(tmp_path), None) if jobs > 1 else None
    try:
        run_tasks(tasks, Mode(), str(tmp_path), None, jobs, cache, forker)
    finally:
        if forker is not None:
            forker.close()
    assert cache.world._words is None  # no file's words read here
    looked_up = {n for entry in cache.entries.values() for n in entry.deps.mentions}
    assert looked_up and all(n in cache.world._mentioning for n in looked_up)
    afresh = World(cache.world.root)
    assert [afresh.state(e.deps) for e in cache.entries.values()] == [e.state for e in cache.entries.values()]
    assert cache.world.remembered() is not None  # every digest was read: the next run reuses the answers


@pytest.mark.parametrize("cached", [True, False])
def test_neither_the_forker_nor_its_workers_read_the_lightning_versions(tmp_path, version_reads, cached):
    """The Lightning version the project declares, and the one installed in the analysed
    environment, are read once, here (where the run keeps a cache, every file's key holds them;
    without one, they are worked out for the files' settings before the files are handed): the
    forker takes them before it forks (a worker would import ``packaging`` and read the
    requirements again, and import ``importlib.metadata`` and read the packages' metadata again,
    ~15–30 ms each at its start). Each process that reads either leaves a mark."""
    tasks = [t for t in _project(tmp_path, 30) if not t.path.endswith(".sh")]
    cache = Cache(str(tmp_path / "cache"), str(tmp_path), None) if cached else None
    forker = Forker.start(str(tmp_path), None)
    assert forker is not None
    try:
        results = run_tasks(tasks, Mode(), str(tmp_path), None, 2, cache, forker)
    finally:
        forker.close()
    assert sum(len(r.findings) for r in results) == len(range(0, 30, 4))
    here = os.getpid()
    assert version_reads() == [f"declared-read-by-{here}", f"installed-read-by-{here}"]


def test_where_nothing_forks_the_workers_are_spawned_and_give_the_same_results(tmp_path, capsys, monkeypatch):
    # macOS and Windows: no forker, and the pool's workers are spawned (``checks._spawned``), each
    # a fresh interpreter that imports the engine and takes this run's state from its initializer
    tasks = _project(tmp_path, 30)
    alone = run_tasks(tasks, Mode(), str(tmp_path), None, 1)
    spawned: list[int] = []
    real = checks._spawned

    def spy(tasks, mode, jobs, order, state, thread=None):
        spawned.append(jobs)
        yield from real(tasks, mode, jobs, order, state, thread)

    monkeypatch.setattr(checks, "_spawned", spy)
    monkeypatch.setattr(sys, "platform", "darwin")
    pooled = run_tasks(tasks, Mode(), str(tmp_path), None, 2)
    monkeypatch.undo()
    assert spawned == [2]
    assert "parallel check failed" not in capsys.readouterr().err
    assert _findings(pooled) == _findings(alone)
    assert sum(len(r.findings) for r in pooled) == len(range(0, 30, 4))


def test_spawned_workers_take_the_lightning_versions_this_process_worked_out(tmp_path, monkeypatch, version_reads):
    """As the forker's workers and the server's: the versions are read once, here, and handed to
    each spawned worker's initializer (each would import ``packaging`` and read the requirements
    and the packages' metadata again at its start)."""
    tasks = [t for t in _project(tmp_path, 30) if not t.path.endswith(".sh")]
    site = [str(version_reads.site), *filter(None, [os.environ.get("PYTHONPATH")])]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(site))  # the spawned workers mark their reads too
    monkeypatch.setattr(sys, "platform", "darwin")
    pooled = run_tasks(tasks, Mode(), str(tmp_path), None, 2)
    monkeypatch.undo()
    assert sum(len(r.findings) for r in pooled) == len(range(0, 30, 4))
    here = os.getpid()
    assert version_reads() == [f"declared-read-by-{here}", f"installed-read-by-{here}"]


def test_the_forker_reads_ahead_whenever_it_waits_for_a_message(tmp_path):
    # what every worker reads first (the files' words, the modules most files import) is read in
    # the forker while it waits: before the project's state comes, and between the messages of the
    # run's beginning — each time from where it stopped, and never while a message waits
    hub_project(tmp_path, HUB_IMPORTERS)
    down, up = os.pipe(), os.pipe()
    ours, theirs = Channel(down[0], up[1]), Channel(up[0], down[1])
    try:
        checks.init_state(str(tmp_path), None)
        workspace = checks.analyzers().workspace
        theirs.send("begin")
        checks._read_ahead(ours)  # a message waits: nothing is read
        assert not workspace._words
        assert ours.receive() == "begin"
        checks._read_ahead(ours)  # none waits: everything is read
        assert set(workspace._words) == set(workspace.python_files())
        assert _parsed(workspace) == {"hub.py", "__init__.py"}
        assert next(checks._ahead(), None) is None  # and not again
    finally:
        ours.close()
        theirs.close()
        checks.init_state(str(tmp_path), None)


def test_the_forker_reads_ahead_after_its_state_and_after_each_file_it_checks_first(tmp_path, monkeypatch):
    tasks = _project(tmp_path, 2)
    script = next(i for i, t in enumerate(tasks) if t.path.endswith(".sh"))
    down, up = os.pipe(), os.pipe()
    ours, theirs = Channel(down[0], up[1]), Channel(up[0], down[1])
    seen: list[str] = []
    monkeypatch.setattr(checks, "_read_ahead", lambda channel: seen.append("read ahead"))
    original = checks._check_task
    monkeypatch.setattr(checks, "_check_task", lambda task, mode: seen.append("checked") or original(task, mode))
    try:
        checks.init_state(str(tmp_path), None)
        theirs.send((str(tmp_path), None, frozenset(), Mode()))  # the state (Forker.begin)
        theirs.send((script, tasks[script]))  # a file to check first (Forker.first)
        theirs.send(([], 1, [], checks.versions_for([])))  # nothing else (Forker.check)
        checks._forked_check(ours)
        assert seen == ["read ahead", "checked", "read ahead"]
        assert [i for i, _ in theirs.receive()] == [script] and theirs.receive() is None
    finally:
        ours.close()
        theirs.close()
        checks.init_state(str(tmp_path), None)
