"""engine/launch.py: where a Fabric is launched, the first call that needs it, and evidence that the
script is run by the Fabric CLI."""

from __future__ import annotations

import ast
import textwrap

from fabric_lsp.engine import launch
from fabric_lsp.engine.semantic import SemanticModel
from fabric_lsp.engine.workspace import Workspace


def model_of(tmp_path, files: dict[str, str], name: str = "train.py") -> SemanticModel:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    ws = Workspace(root=str(tmp_path))
    module = ws.load_path(str(tmp_path / name))
    assert module is not None
    return SemanticModel(module, ws)


def calls(model: SemanticModel, attr: str) -> list[ast.Call]:
    return model.method_calls(attr)


def fabric_of(model: SemanticModel, call: ast.Call):
    fabrics, _ = model.fabrics(call.func.value)
    assert len(fabrics) == 1
    return fabrics[0]


def test_launch_in_another_module(tmp_path):
    model = model_of(
        tmp_path,
        {
            "train.py": """
                from lightning.fabric import Fabric
                from runner import run
                fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
                run(fabric)
                model = fabric.setup(model)
            """,
            "runner.py": """
                def run(fabric):
                    fabric.launch()
            """,
        },
    )
    setup = calls(model, "setup")[0]
    found, maybe = model.launches_of(fabric_of(model, setup))
    assert [m.path.endswith("runner.py") for m, _ in found] == [True]
    assert not maybe


def test_no_launch_and_an_unresolved_launch(tmp_path):
    model = model_of(
        tmp_path,
        {
            "train.py": """
                from lightning.fabric import Fabric
                fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
                model = fabric.setup(model)
            """
        },
    )
    fabric = fabric_of(model, calls(model, "setup")[0])
    assert model.launches_of(fabric) == ([], False)
    (tmp_path / "other.py").write_text("def go(thing):\n    thing.launch()\n")
    model.workspace.invalidate()
    assert model.launches_of(fabric)[1] is True


def test_launch_around_and_first_needing_launch(tmp_path):
    model = model_of(
        tmp_path,
        {
            "train.py": """
                from lightning.fabric import Fabric
                fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
                loader = fabric.setup_dataloaders(loader)
                model = fabric.setup(model)
                fabric.launch()
                fabric.barrier()
            """
        },
    )
    first = calls(model, "setup_dataloaders")[0]
    assert model.first_needing_launch(fabric_of(model, first)) is first
    assert model.launch_around(first) == (False, calls(model, "launch")[0])
    assert model.launch_around(calls(model, "barrier")[0]) == (True, None)


def test_cli_evidence_is_a_command_line(tmp_path):
    model = model_of(
        tmp_path,
        {"train.py": '"""Only ``fabric run`` would exempt this script; see `fabric run --help`."""\nx = 1\n'},
    )
    assert model.cli_evidence() is None
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "train.sh").write_text("#!/bin/sh\nfabric run --devices=4 --strategy=ddp train.py\n")
    launch._evidence_cache.clear()
    evidence = model.cli_evidence()
    assert evidence is not None and evidence.path.endswith("train.sh") and evidence.line == 1


def test_a_fabric_subclass_run_is_a_launch(tmp_path):
    model = model_of(
        tmp_path,
        {
            "lite.py": """
                import lightning as L

                class Lite(L.Fabric):
                    def run(self, cfg):
                        model = self.setup_module(make_model(cfg))
                        self.helper(model)

                    def helper(self, model):
                        self.barrier()
            """,
            "main.py": """
                from lite import Lite

                Lite(accelerator="cuda", devices=2, strategy="ddp").run({})
            """,
        },
        name="lite.py",
    )
    setup = calls(model, "setup_module")[0]
    assert model.in_overridden_run(setup)
    barrier = calls(model, "barrier")[0]
    assert not model.in_overridden_run(barrier)
    fabrics, _ = model.fabrics(barrier.func.value)
    found, _ = model.launches_of(fabrics[0])
    assert [m.path.endswith("main.py") for m, _ in found] == [True]


MISSING_LAUNCH = """
{doc}
import torch
from lightning.fabric import Fabric

fabric = Fabric(accelerator="cuda", devices=4, strategy="ddp")
model = fabric.setup_module(torch.nn.Linear(2, 2))
"""


def _fab007(tmp_path, doc: str):
    from fabric_lsp.engine import Analyzer
    from fabric_lsp.rules import RULES_BY_CODE

    (tmp_path / "train.py").write_text(textwrap.dedent(MISSING_LAUNCH.format(doc=doc)).lstrip("\n"))
    launch._evidence_cache.clear()
    analyzer = Analyzer(Workspace(root=str(tmp_path)), [RULES_BY_CODE["FAB007"]])
    return analyzer.analyze((tmp_path / "train.py").read_text(), str(tmp_path / "train.py"))


def test_a_missing_launch_is_an_error_without_cli_evidence(tmp_path):
    [finding] = _fab007(tmp_path, '"""Train a model."""')
    assert finding.severity.name == "ERROR"


def test_a_script_that_says_it_runs_under_fabric_run_needs_no_launch(tmp_path):
    assert _fab007(tmp_path, '"""Run with: fabric run --accelerator=cuda --devices=4 --strategy=ddp train.py"""') == []


def test_a_readme_that_runs_the_script_with_fabric_run_makes_it_a_warning(tmp_path):
    (tmp_path / "README.md").write_text("```\nfabric run --devices=4 --strategy=ddp train.py\n```\n")
    [finding] = _fab007(tmp_path, '"""Train a model."""')
    assert finding.severity.name == "WARNING" and "README.md" in finding.message
