"""Answers about other modules, shared by the analyses of one workspace: the same findings as
analyses that work everything out themselves, the same dependencies recorded, and nothing kept
across an announced change."""

from __future__ import annotations

from pathlib import Path

from fabric_lsp.engine.analyzer import Analyzer
from fabric_lsp.engine.workspace.memo import SharedAnswers
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import ALL_RULES

HELPER = """\
from lightning.fabric import Fabric

STRATEGY = "deepspeed"


def make_fabric(devices=2):
    return Fabric(strategy=STRATEGY, devices=devices)
"""

TRAIN = """\
from helper import make_fabric

fabric = make_fabric()
fabric.launch()
model = fabric.setup_module(model)
optimizer = fabric.setup_optimizers(optimizer)
"""


def _project(tmp_path: Path) -> list[Path]:
    (tmp_path / "helper.py").write_text(HELPER)
    scripts = [tmp_path / f"train_{i}.py" for i in range(3)]
    for script in scripts:
        script.write_text(TRAIN)
    return scripts


def _findings(analyzer: Analyzer, script: Path) -> list[tuple[str, int, str]]:
    return [(f.code, f.span.start.line, f.message) for f in analyzer.analyze(script.read_text(), str(script))]


def test_analyses_sharing_answers_find_what_each_finds_alone(tmp_path: Path):
    scripts = _project(tmp_path)
    alone = [_findings(Analyzer(Workspace(str(tmp_path)), ALL_RULES), s) for s in scripts]
    workspace = Workspace(str(tmp_path))
    analyzer = Analyzer(workspace, ALL_RULES)
    shared = [_findings(analyzer, s) for s in scripts]
    assert shared == alone
    assert alone[0] and all(code == "FAB001" for code, _, _ in alone[0])
    assert SharedAnswers.of(workspace).answers  # the helper's Fabric was worked out once


def test_a_shared_answer_records_the_modules_it_read_for_every_asker(tmp_path: Path):
    scripts = _project(tmp_path)
    workspace = Workspace(str(tmp_path))
    analyzer = Analyzer(workspace, ALL_RULES)
    recorded = []
    for script in scripts:
        with workspace.recording() as found:
            _findings(analyzer, script)
        recorded.append(found.freeze())
    assert str(tmp_path / "helper.py") in recorded[-1].paths
    assert recorded[1:] == recorded[:-1]


def test_an_announced_change_drops_the_shared_answers(tmp_path: Path):
    scripts = _project(tmp_path)
    workspace = Workspace(str(tmp_path))
    analyzer = Analyzer(workspace, ALL_RULES)
    assert _findings(analyzer, scripts[0])
    (tmp_path / "helper.py").write_text(HELPER.replace('"deepspeed"', '"ddp"'))
    workspace.invalidate(str(tmp_path / "helper.py"))
    assert not SharedAnswers.of(workspace).answers
    assert _findings(analyzer, scripts[1]) == _findings(Analyzer(Workspace(str(tmp_path)), ALL_RULES), scripts[1])
