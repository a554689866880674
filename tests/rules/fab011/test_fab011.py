"""FAB011 in notebooks: the interactive scenarios of a notebook's Fabric, the engine's questions,
and ``fabric-lsp check --fix`` on an .ipynb."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from fabric_lsp.engine.analyzer import Analyzer
from fabric_lsp.engine.findings import Pos, Severity
from fabric_lsp.engine.lightning import interactive
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import ALL_RULES

HEADER = "from lightning.fabric import Fabric\n\n\ndef train(fabric):\n    pass\n\n\n"


def fab011(source: str, path: str = "nb.ipynb"):
    return [f for f in Analyzer(Workspace(), ALL_RULES).analyze(source, path) if f.code == "FAB011"]


def test_scenarios_resolve_in_a_notebook_only_for_notebooks():
    source = HEADER + 'fabric = Fabric(devices=2, strategy="ddp")\n'
    for path, interactive_expected in (("nb.ipynb", True), ("train.py", False), (None, False)):
        model = SemanticModel(ModuleInfo(source, path), Workspace())
        call = interactive.candidate_calls(model.module)[0]
        (fabric,) = model.fabrics(call)[0]
        scenarios = model.scenarios(fabric)
        assert scenarios and all(s.outcome is not None for s in scenarios)
        assert all(s.outcome.host.interactive is interactive_expected for s in scenarios)
        assert all(interactive.refused_interactively(s) is interactive_expected for s in scenarios)


@pytest.mark.parametrize(
    "line, severity",
    [
        ('fabric = Fabric(devices=2, strategy="ddp")', Severity.ERROR),
        ('fabric = Fabric(devices=2, strategy="ddp_spawn")', Severity.ERROR),
        ('fabric = Fabric(accelerator="cuda", devices=4, strategy="fsdp")', Severity.ERROR),
        ('fabric = Fabric(accelerator="cuda", strategy="deepspeed_stage_3")', Severity.ERROR),
        ('fabric = Fabric(devices=2, strategy="ddp_notebook")', None),
        ('fabric = Fabric(devices=2, strategy="ddp_fork")', None),
        ("fabric = Fabric(devices=2)", None),  # auto: ddp_fork in a notebook
        ('fabric = Fabric(accelerator="cuda", devices=2, strategy="dp")', None),
        ('fabric = Fabric(accelerator="tpu", devices=8)', None),  # the XLA launcher is interactive
        ("import sys\nfabric = Fabric(devices=2, strategy=sys.argv[1])", None),  # not known: nothing
        ('def main():\n    return Fabric(devices=2, strategy="ddp")', Severity.WARNING),  # not visibly called
        ('def main():\n    return Fabric(devices=2, strategy="ddp")\n\n\nfabric = main()', Severity.ERROR),
        (
            'def main():\n    Fabric(devices=2, strategy="ddp")\n\n\nif __name__ == "__main__":\n    main()',
            Severity.ERROR,
        ),
    ],
)
def test_which_configurations_are_refused(line, severity):
    found = fab011(HEADER + line + "\n")
    assert [f.severity for f in found] == ([severity] if severity else [])


def test_only_notebooks_are_checked():
    assert fab011(HEADER + 'fabric = Fabric(devices=2, strategy="ddp")\n', "train.py") == []


def test_a_factory_from_another_module_is_reported_where_the_notebook_calls_it(tmp_path):
    (tmp_path / "helpers.py").write_text(
        'from lightning.fabric import Fabric\n\n\ndef make_fabric():\n    return Fabric(strategy="ddp", devices=2)\n'
    )
    notebook_program = "from helpers import make_fabric\n\nfabric = make_fabric()\n"
    found = [
        f
        for f in Analyzer(Workspace(str(tmp_path)), ALL_RULES).analyze(notebook_program, str(tmp_path / "nb.ipynb"))
        if f.code == "FAB011"
    ]
    assert [(f.severity, f.span.start.line) for f in found] == [(Severity.ERROR, 2)]
    assert found[0].fix is None  # the literal is in another module


def test_fix_only_where_ddp_notebook_is_equivalent():
    with_fn = HEADER + 'fabric = Fabric(devices=2, strategy="ddp")\nfabric.launch(train)\n'
    (f,) = fab011(with_fn)
    assert f.fix is not None and [e.new_text for e in f.fix.edits] == ['"ddp_notebook"']
    (f,) = fab011(with_fn.replace("launch(train)", "launch()"))
    assert f.fix is None and "needs `fabric.launch(fn)`" in f.message
    (f,) = fab011("import torch\n" + with_fn.replace("fabric = ", "x = torch.ones(1).cuda()\nfabric = "))
    assert f.fix is None and "CUDA is used before the launch" in f.message
    (f,) = fab011(with_fn.replace('"ddp"', '"ddp_spawn"'))
    assert f.fix is None


def test_cuda_used_before():
    module = ModuleInfo(
        "import torch\n# model.cuda()\nx = 0\nm = net.to('cuda')\ntorch.cuda.is_available()\n", "nb.ipynb"
    )
    assert module.tree is not None
    assert interactive.cuda_used_before(module, module.tree.body[-1]) == 4  # not the comment
    assert interactive.cuda_used_before(module, module.tree.body[2]) is None
    module = ModuleInfo("import torch\nn = torch.cuda.device_count()\nx = 1\n", "nb.ipynb")
    assert module.tree is not None
    assert interactive.cuda_used_before(module, module.tree.body[-1]) == 2  # Lightning's docs: not before launch


def _notebook(cells: list[str]) -> str:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell{i}"
    return nbformat.writes(nb) + "\n"


def test_check_and_fix_a_notebook(tmp_path: Path):
    cells = [
        "from lightning.fabric import Fabric\n\n\ndef train(fabric):\n    print(fabric.global_rank)",
        "%load_ext autoreload\nfabric = Fabric(accelerator='cpu', devices=2, strategy='ddp')",
        "fabric.launch(train)",
    ]
    path = tmp_path / "train.ipynb"
    path.write_text(_notebook(cells))
    env = {**os.environ, "NO_COLOR": "1"}
    run = [sys.executable, "-m", "fabric_lsp", "check"]
    r = subprocess.run(
        [*run, "--output-format", "json", path.name], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=180
    )
    assert r.returncode == 1, r.stderr
    (item,) = [i for i in json.loads(r.stdout) if i["code"] == "FAB011"]
    assert item["cell"] == 2 and item["location"] == {"row": 2, "column": 10}
    r = subprocess.run([*run, "--fix", path.name], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    fixed = nbformat.reads(path.read_text(), as_version=4)
    assert (
        fixed.cells[1].source
        == "%load_ext autoreload\nfabric = Fabric(accelerator='cpu', devices=2, strategy='ddp_notebook')"
    )
    assert [c.source for c in fixed.cells[::2]] == cells[::2]


def test_hover_explains_the_configuration_and_where_the_strategy_comes_from():
    source = HEADER + 'strategy = "ddp"\nfabric = Fabric(accelerator="cuda", devices=2, strategy=strategy)\n'
    analysis = Analyzer(Workspace(), ALL_RULES).analysis(source, "nb.ipynb")
    line = source.splitlines().index('fabric = Fabric(accelerator="cuda", devices=2, strategy=strategy)')
    text = analysis.hover(Pos(line, 12))
    assert text is not None and "in a notebook" in text and "refused" in text
    assert "strategy='ddp'" in text and f"nb.ipynb:{line}" in text  # where the strategy is written
