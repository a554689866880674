"""A process that forks workers imports the engine with the garbage collector paused (the import
makes ~17,000 objects that live as long as the process, and no garbage: each collection it
triggered scanned everything for nothing), and freezes what it holds before it forks, so that
neither it nor a forked process scans those objects again (a scan in a forked process writes to,
and so copies, each page it shares with its parent)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fabric_lsp.documents import pool

_COLLECTIONS = """\
import gc, importlib, sys
import fabric_lsp.cli.checks  # what the forker holds when it imports the engine
from fabric_lsp.documents.pool import PRELOAD, import_preload
starts, during = [], []
gc.callbacks.append(lambda phase, info: starts.append(info["generation"]) if phase == "start" else None)
imported = importlib.import_module
importlib.import_module = lambda name: (imported(name), during.append(len(starts)))[0]  # as it returns
if sys.argv[1] == "paused":
    import_preload()
else:
    importlib.import_module(PRELOAD)
print(during[0], gc.isenabled(), "fabric_lsp.engine.analyzer" in sys.modules)
"""


def _collections(how: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(pool.__file__).resolve().parents[2])}
    run = subprocess.run(
        [sys.executable, "-c", _COLLECTIONS, how], capture_output=True, text=True, timeout=120, env=env
    )
    assert run.returncode == 0, run.stderr
    return run.stdout.split()


def test_the_engine_is_imported_with_the_collector_paused():
    collections, enabled, imported = _collections("plain")
    assert int(collections) > 0 and enabled == "True" and imported == "True"  # what it costs otherwise
    assert _collections("paused") == ["0", "True", "True"]  # none, and the collector runs again after


@pytest.fixture
def unfrozen():
    gc.unfreeze()
    yield
    gc.unfreeze()  # the rest of the test session imports nothing for workers


def test_what_a_process_holds_once_it_imported_the_engine_is_frozen(unfrozen):
    """Each caller of ``import_preload`` forks workers next (the check's forker, the server's head
    start): the engine, and what was there before it, leave the generations the collector scans."""
    assert gc.get_freeze_count() == 0
    pool.import_preload()
    assert gc.get_freeze_count() > 0 and gc.isenabled()
