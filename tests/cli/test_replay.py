"""A check replayed from its run record (:mod:`fabric_lsp.cli.replay`): an unchanged project prints
what the check printed, without analysing; anything it read that changed runs the check again,
and what is printed is always what a run without the cache prints (a property test over random
edits)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cli.test_cli_cache import EDITS, HELPERS, TRAIN, _apply

#: runs the check in a fresh interpreter, then says on stderr's last line whether it analysed
RUN = (
    "import sys\n"
    "from fabric_lsp.cli.main import main\n"
    "status = main(sys.argv[1:])\n"
    "print('ANALYSED' if 'fabric_lsp.cli.checks' in sys.modules else 'REPLAYED', file=sys.stderr)\n"
    "sys.exit(status)\n"
)


def run(root: Path, cache_home: Path, *args: str, together: bool = False) -> tuple[str, str, int, str]:
    """(stdout, stderr, status, "ANALYSED" or "REPLAYED") of ``fabric-lsp check . *args``
    (``together``: both in one pipe, returned as stdout)."""
    import fabric_lsp

    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(cache_home),
        "PYTHONPATH": str(Path(fabric_lsp.__file__).resolve().parents[1]),
    }
    env.pop("FABRIC_LSP_DEBUG", None)
    named = [*args] if together else [".", *args]
    r = subprocess.run(
        [sys.executable, "-c", RUN, "check", *named],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if together else subprocess.PIPE,
        text=True,
        cwd=root,
        env=env,
        timeout=120,
    )
    if together:
        out, _, how = r.stdout.rstrip("\n").rpartition("\n")
        return out, "", r.returncode, how
    err, _, how = r.stderr.rstrip("\n").rpartition("\n")
    return r.stdout, err + "\n" if err else "", r.returncode, how


def _project(root: Path) -> None:
    (root / "train.py").write_text(TRAIN)
    (root / "helpers.py").write_text(HELPERS.format(strategy="deepspeed"))
    (root / "lib").mkdir()
    (root / "lib" / "stats.py").write_text("import numpy as np\n")


def test_an_unchanged_project_is_replayed_with_what_the_check_printed(tmp_path):
    root, home = tmp_path / "project", tmp_path / "home"
    root.mkdir()
    _project(root)
    for args in ((), ("--format", "json"), ("--select", "FAB002")):
        first = run(root, home, *args)
        again = run(root, home, *args)
        assert first[3] == "ANALYSED" and again == (*first[:3], "REPLAYED"), args
    assert first[2] in (0, 1)
    assert run(root, home, "--no-cache")[3] == "ANALYSED"  # options that are not replayed
    # standard output and error sent to one file: replayed in the order they were printed
    (root / "empty.py").write_text("")
    combined = [run(root, home, "empty.py", "train.py", together=True) for _ in range(2)]
    assert combined[1] == (*combined[0][:3], "REPLAYED") and "note: empty file" in combined[0][0]


def test_a_project_is_not_replayed_once_what_its_check_read_has_changed(tmp_path):
    """A changed module, a file added to a folder, a configuration, the cache removed: each
    runs the check again, and prints what a check without the cache prints."""
    root, home = tmp_path / "project", tmp_path / "home"
    root.mkdir()
    _project(root)
    changes = [
        lambda: (root / "helpers.py").write_text(HELPERS.format(strategy="ddp")),
        lambda: (root / "lib" / "new.py").write_text(
            "from helpers import make_fabric\nmake_fabric().setup_optimizers(o)\n"
        ),
        lambda: (root / "pyproject.toml").write_text('[tool.fabric-lsp]\nignore = ["FAB001"]\n'),
        lambda: (root / "pyproject.toml").write_text('[tool.fabric-lsp]\nignore = ["FAB001", "FAB007"]\n'),
        lambda: (root / "lib" / "new.py").unlink(),
        lambda: __import__("shutil").rmtree(root / ".fabric_lsp_cache"),
    ]
    run(root, home)
    assert run(root, home)[3] == "REPLAYED"
    for i, change in enumerate(changes):
        change()
        after = run(root, home)
        fresh = run(root, home, "--no-cache")
        assert after[3] == "ANALYSED" and after[:3] == fresh[:3], i
        assert run(root, home) == (*after[:3], "REPLAYED"), i


def test_a_file_changed_during_the_check_is_not_replayed(tmp_path, monkeypatch):
    """A file whose times say it changed while the check ran: the check's record is not kept."""
    from fabric_lsp.cli import replay

    path = tmp_path / "a.py"
    path.write_text("x = 1\n")
    signature = replay._read("file", str(path))
    assert replay._settled(("file", str(path), signature), time.time_ns() - 10**9) is None
    assert replay._settled(("file", str(path), signature), time.time_ns())[0] == "content"  # just before
    assert replay._settled(("file", str(path), signature), time.time_ns() + 10 * replay.RACY_NS)[0] == "file"


@pytest.mark.slow
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(EDITS, min_size=1, max_size=4))
def test_replayed_results_equal_a_fresh_run(tmp_path_factory, edits):
    root = tmp_path_factory.mktemp("ws")
    home = tmp_path_factory.mktemp("home")
    (root / "train.py").write_text(TRAIN)
    (root / "helpers.py").write_text(HELPERS.format(strategy="deepspeed"))
    run(root, home, "--format", "json")
    for edit in edits:
        _apply(root, edit)
        cached = run(root, home, "--format", "json")
        replayed = run(root, home, "--format", "json")
        fresh = run(root, home, "--format", "json", "--no-cache")
        assert cached[:3] == replayed[:3] == fresh[:3], edits
        assert replayed[3] == "REPLAYED", edits


def test_a_run_that_reported_an_internal_error_is_not_kept(capsys):
    """As the cache keeps no result of an internal error, a run that printed one is not replayed:
    the next run checks again."""
    from fabric_lsp.cli import replay

    recording = replay.Recording(["check", "."])
    try:
        print("train.py: error: internal error while checking (KeyError: 'x')", file=sys.stderr)
        print("Found 1 problem.")
    finally:
        recording.close()
    assert recording.went_wrong()
    assert capsys.readouterr().err.startswith("train.py: error: internal error")  # written through
    quiet = replay.Recording(["check", "."])
    print("All checks passed!")
    quiet.close()
    assert not quiet.went_wrong()
