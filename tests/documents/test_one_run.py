"""A process that makes one run (the command line's, a worker's) freezes what outlives each
analysis, so that the garbage collector stops scanning the workspace's parsed modules again and
again; the server's own analyzers (a long-lived process, whose old module versions must be
collectable) freeze nothing. The findings are the same either way."""

from __future__ import annotations

import gc

import pytest
from fabric_lsp.config import Config
from fabric_lsp.documents import check
from fabric_lsp.documents.analyzers import Analyzers, for_one_run
from fabric_lsp.engine.workspace.workspace import Workspace

TRAIN = """\
from lightning.fabric import Fabric

fabric = Fabric(strategy="deepspeed")
model = fabric.setup_module(model)
optimizer = fabric.setup_optimizers(optimizer)
"""


@pytest.fixture
def unfrozen():
    gc.unfreeze()
    yield
    gc.unfreeze()  # the rest of the test session is not a one-run process


def _findings(analyzers: Analyzers, path: str) -> list:
    config = Config()
    return check.analysis(analyzers.for_config(config), config, TRAIN, path).findings


def test_a_one_run_process_freezes_what_outlives_each_analysis(tmp_path, unfrozen):
    path = str(tmp_path / "train.py")
    (tmp_path / "train.py").write_text(TRAIN)
    kept = Analyzers(Workspace(str(tmp_path)))
    expected = _findings(kept, path)
    assert gc.get_freeze_count() == 0  # the server's analyzers freeze nothing
    one_run = for_one_run(str(tmp_path), None)
    after_start = gc.get_freeze_count()
    assert after_start > 0  # the engine, imported
    assert _findings(one_run, path) == expected
    assert gc.get_freeze_count() > after_start  # and what the analysis left
    assert "FAB001" in {f.code for f in expected}
