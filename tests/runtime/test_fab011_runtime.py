"""Runtime proof for FAB011: a notebook whose Fabric uses `strategy="ddp"` fails with Lightning's
own interactive-environment error when its cells run in an interactive interpreter, fabric-lsp
flags it as an error, and `fabric-lsp check --fix` turns it into a notebook that runs (2 CPU
processes forked by `ddp_notebook`).

The cells run under `python -i` (stdin closed): Lightning's `_IS_INTERACTIVE` is
`hasattr(sys, "ps1") or bool(sys.flags.interactive)` (utilities/imports.py:30), true there as in a
Jupyter kernel (IPython sets `sys.ps1`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.runtime

MESSAGE = (
    "`Fabric(strategy='ddp')` is not compatible with an interactive environment. Run your code as a script,"
    " or choose one of the compatible strategies: `Fabric(strategy='dp'|'ddp_notebook')`."
)

CELLS = [
    "import torch\nfrom lightning.fabric import Fabric",
    "def train(fabric):\n"
    "    total = fabric.all_reduce(torch.tensor(float(fabric.global_rank + 1)), reduce_op='sum')\n"
    "    print(f'rank {fabric.global_rank}/{fabric.world_size} total {total.item()}', flush=True)",
    "fabric = Fabric(accelerator='cpu', devices=2, strategy='ddp')",
    "fabric.launch(train)\nprint('launched', flush=True)",
]


def _notebook(path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in CELLS]
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell{i}"
    path.write_text(nbformat.writes(nb) + "\n")


def _run_interactively(notebook: Path, python: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """The notebook's cells, in order, in an interactive interpreter (`python -i`, stdin closed)."""
    cells = nbformat.reads(notebook.read_text(), as_version=4).cells
    script = notebook.with_suffix(".cells.py")
    script.write_text("\n\n".join(c.source for c in cells if c.cell_type == "code") + "\n")
    return subprocess.run(
        [str(python), "-i", str(script)],
        cwd=notebook.parent,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )


def _check(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fabric_lsp", "check", *args], cwd=cwd, capture_output=True, text=True, timeout=180
    )


def test_fab011_notebook_fails_in_an_interactive_interpreter_and_the_fix_runs(tmp_path, runtime_python, runtime_env):
    notebook = tmp_path / "train.ipynb"
    _notebook(notebook)

    failed = _run_interactively(notebook, runtime_python, runtime_env)
    assert MESSAGE in failed.stderr, failed.stdout + failed.stderr
    assert "launched" not in failed.stdout

    report = _check("--output-format", "json", notebook.name, cwd=tmp_path)
    found = [f for f in json.loads(report.stdout) if f["code"] == "FAB011"]
    assert [(f["cell"], f["location"]["row"]) for f in found] == [(3, 1)], report.stdout + report.stderr
    assert report.returncode == 1

    fixed = _check("--fix", notebook.name, cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "strategy='ddp_notebook'" in notebook.read_text()

    ran = _run_interactively(notebook, runtime_python, runtime_env)
    assert "rank 0/2 total 3.0" in ran.stdout and "rank 1/2 total 3.0" in ran.stdout, ran.stdout + ran.stderr
    assert "Error" not in ran.stderr, ran.stderr
