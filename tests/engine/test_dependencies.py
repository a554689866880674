"""The dependency record of an analysis and the graph of documents it feeds."""

from __future__ import annotations

from pathlib import Path

from fabric_lsp.engine.analyzer import Analyzer
from fabric_lsp.engine.dependencies import Dependencies, DependencyGraph, module_names_of
from fabric_lsp.engine.workspace import Workspace
from fabric_lsp.rules import ALL_RULES

TRAIN = """\
from lightning.fabric import Fabric
from {module} import STRATEGY

fabric = Fabric(strategy=STRATEGY)
fabric.launch()
model = fabric.setup_module(model)
optimizer = fabric.setup_optimizers(optimizer)
"""


def test_module_names_of_a_path(tmp_path: Path):
    assert module_names_of(str(tmp_path / "pkg" / "sub" / "mod.py")) >= {"mod", "sub.mod", "pkg.sub.mod"}
    assert "pkg.sub" in module_names_of(str(tmp_path / "pkg" / "sub" / "__init__.py"))
    assert module_names_of(str(tmp_path / "pyproject.toml")) == set()


def test_an_analysis_records_the_modules_it_read_and_the_ones_it_missed(tmp_path: Path):
    (tmp_path / "config.py").write_text('STRATEGY = "deepspeed"\n')
    workspace = Workspace(str(tmp_path))
    analyzer = Analyzer(workspace, ALL_RULES)
    with workspace.recording() as found:
        assert [f.code for f in analyzer.analyze(TRAIN.format(module="config"), str(tmp_path / "train.py"))] == ["FAB001"]
    assert str(tmp_path / "config.py") in found.paths
    with workspace.recording() as missing:
        assert analyzer.analyze(TRAIN.format(module="settings"), str(tmp_path / "train.py")) == []
    assert "settings" in missing.missing

    # the file appears: the cached "not found" is dropped and the module resolves
    (tmp_path / "settings.py").write_text('STRATEGY = "deepspeed_stage_2"\n')
    workspace.invalidate(str(tmp_path / "settings.py"), appeared_or_vanished=True)
    assert [f.code for f in analyzer.analyze(TRAIN.format(module="settings"), str(tmp_path / "train.py"))] == ["FAB001"]


def test_unsaved_buffers_win_over_the_disk(tmp_path: Path):
    config = tmp_path / "config.py"
    config.write_text('STRATEGY = "ddp"\n')
    buffers: dict[str, str] = {}
    workspace = Workspace(str(tmp_path), overlay=buffers.get)
    analyzer = Analyzer(workspace, ALL_RULES)
    train = TRAIN.format(module="config")
    assert analyzer.analyze(train, str(tmp_path / "train.py")) == []
    buffers[str(config)] = 'STRATEGY = "deepspeed"\n'
    assert [f.code for f in analyzer.analyze(train, str(tmp_path / "train.py"))] == ["FAB001"]
    del buffers[str(config)]
    assert analyzer.analyze(train, str(tmp_path / "train.py")) == []
    buffers[str(tmp_path / "new.py")] = 'STRATEGY = "deepspeed_stage_2"\n'  # a buffer never saved is a module too
    assert [f.code for f in analyzer.analyze(TRAIN.format(module="new"), str(tmp_path / "train.py"))] == ["FAB001"]


def test_graph_dependents(tmp_path: Path):
    graph = DependencyGraph()
    graph.record("a", Dependencies(paths=frozenset({str(tmp_path / "config.py")})))
    graph.record("b", Dependencies(missing=frozenset({"pkg.settings"})))
    graph.record("c", Dependencies(mentions=frozenset({"train_step"})))
    assert graph.dependents(str(tmp_path / "config.py")) == {"a"}
    settings = str(tmp_path / "pkg" / "settings.py")
    assert graph.dependents(settings) == set()  # changed, not created: a missing name is not affected
    assert graph.dependents(settings, appeared_or_vanished=True) == {"b"}
    texts = {str(tmp_path / "loop.py"): "def train_step(): ...\n", str(tmp_path / "other.py"): "x = 1\n"}
    assert graph.dependents(str(tmp_path / "loop.py"), text=texts.get) == {"c"}
    assert graph.dependents(str(tmp_path / "other.py"), text=texts.get) == set()
    graph.forget("a")
    assert graph.dependents(str(tmp_path / "config.py")) == set()


def test_a_record_that_reused_results_adds_to_the_previous_one(tmp_path: Path):
    graph = DependencyGraph()
    config = str(tmp_path / "config.py")
    graph.record("train", Dependencies(paths=frozenset({config})))
    graph.record("train", Dependencies(), merge=True)  # reused verdicts: no lookups repeated
    assert graph.dependents(config) == {"train"}
    graph.record("train", Dependencies())  # computed afresh: the record is replaced
    assert graph.dependents(config) == set()
