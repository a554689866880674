"""The runtime proofs' harness (conftest.Started): a run that could not start because its
rendezvous port was taken is started again; any other failure is the run's result."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from conftest import PORT_TAKEN, Started

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
