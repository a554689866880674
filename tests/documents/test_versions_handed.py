"""documents/pool.py: the Lightning versions one process works out, taken by the workers it starts
(``fabric-lsp check``'s forker, the server's workers forked from a fork server): a fresh
interpreter that takes them reads neither the requirements nor the packages' metadata."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

from fabric_lsp import declared_version
from fabric_lsp.config import Config
from fabric_lsp.documents.pool import versions_for

_WORKER = """\
import pickle, sys
from fabric_lsp import declared_version, facts
from fabric_lsp.config import Config
from fabric_lsp.documents.pool import recall_versions

def refuse(*args):
    raise AssertionError(f"read again: {args}")

versions, root = pickle.loads(sys.stdin.buffer.read())
if sys.argv[1] == "recall":
    recall_versions(versions)
declared_version.read_declared = refuse
facts._read_lightning_version = refuse
print(Config(project_root=root).lightning_version_and_source)
"""


def _worker(versions, root: Path, how: str) -> subprocess.CompletedProcess:
    package = str(Path(declared_version.__file__).resolve().parents[1])
    return subprocess.run(
        [sys.executable, "-c", _WORKER, how],
        input=pickle.dumps((versions, str(root))),
        capture_output=True,
        env={"PYTHONPATH": package, "PATH": "/usr/bin:/bin"},
        timeout=60,
    )


def test_a_fresh_worker_takes_the_versions_worked_out_before_it_started(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["lightning>=2.1,<2.3"]\n')
    declared_version.forget()
    config = Config(project_root=str(tmp_path))
    versions = versions_for([config, config])
    here = config.lightning_version_and_source
    taken = _worker(versions, tmp_path, "recall")
    assert taken.returncode == 0, taken.stderr.decode()
    assert taken.stdout.decode().strip() == str(here)
    assert _worker(versions, tmp_path, "forget").returncode != 0  # without them it reads them again
