"""The runtime proofs' harness (conftest.Started): a run that could not start because its
rendezvous port was taken is started again; a run that aborted in torch's teardown after its
work is started again, and counts as run where every try aborted so and no rank failed before;
any other failure is the run's result."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from conftest import PORT_TAKEN, TEARDOWN_ABORT, TEARDOWN_RETRIES, Started

SCRIPT = """\
import sys
from pathlib import Path

runs = Path("runs")
runs.write_text(runs.read_text() + "x" if runs.exists() else "x")
if len(runs.read_text()) <= {failures}:
    sys.exit("torch.distributed.DistNetworkError: {error}")
print("RUNTIME-OK")
"""


def _run(tmp_path: Path, failures: int, error: str) -> tuple[int, int]:
    script = tmp_path / "train.py"
    script.write_text(SCRIPT.format(failures=failures, error=error))
    run = Started(script, Path(sys.executable), dict(os.environ)).result()
    return run.returncode, len((tmp_path / "runs").read_text())


def test_a_run_whose_port_was_taken_is_started_again(tmp_path: Path):
    assert _run(tmp_path, 1, f"port: 29500, code: -98, name: {PORT_TAKEN}, message: address already in use") == (0, 2)


def test_a_run_that_fails_otherwise_is_not_started_again(tmp_path: Path):
    assert _run(tmp_path, 1, "The server socket has timed out") == (1, 1)


#: a script that does its work, then dies as libstdc++ makes a process die when a gloo thread still
#: runs at exit (after the traceback of a rank that failed, with ``failed``)
ABORTING = """\
import os
import sys
from pathlib import Path

runs = Path("runs")
runs.write_text(runs.read_text() + "x" if runs.exists() else "x")
if {failed}:
    print("Traceback (most recent call last):\\nRuntimeError: a rank failed", file=sys.stderr)
print("RUNTIME-OK rank=0", flush=True)
print("{abort}", file=sys.stderr, flush=True)
os.abort()
"""


def _aborting(tmp_path: Path, failed: bool):
    script = tmp_path / "train.py"
    script.write_text(ABORTING.format(failed=failed, abort=TEARDOWN_ABORT))
    return Started(script, Path(sys.executable), dict(os.environ)).result(), len((tmp_path / "runs").read_text())


def test_a_run_that_always_aborts_in_teardown_after_its_work_counts_as_run(tmp_path: Path):
    with pytest.warns(UserWarning, match="aborted in torch's teardown after RUNTIME-OK, counted as run"):
        run, tries = _aborting(tmp_path, failed=False)
    assert run.returncode == 0 and tries == 1 + TEARDOWN_RETRIES and "counted as run" in run.stderr


def test_a_run_where_a_rank_failed_before_the_abort_is_its_result(tmp_path: Path):
    run, tries = _aborting(tmp_path, failed=True)
    assert run.returncode != 0 and tries == 1 + TEARDOWN_RETRIES
