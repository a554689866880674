"""``fabric-lsp check`` on notebooks: golden outputs (positions in cells), fixes that keep the
notebook's outputs and formatting, --diff, bad JSON, discovery, SARIF and GitHub annotations."""

from __future__ import annotations

import difflib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import nbformat
import pytest

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "data" / "notebooks"
GOLDEN = HERE / "golden"
REPO = HERE.parents[1]
SARIF_SCHEMA = REPO / "tests" / "data" / "sarif-schema-2.1.0.json"


def cli(*args, cwd, stdin=None):
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "fabric_lsp", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=180,
        input=stdin,
        env=env,
    )


@pytest.fixture
def work(tmp_path) -> Path:
    for f in DATA.glob("*.ipynb"):
        shutil.copy(f, tmp_path / f.name)
    # These notebooks create DeepSpeed Fabrics at the top level, which Lightning refuses in a
    # notebook (FAB011, tested in test_fab011.py); the CLI's notebook handling is tested with FAB001.
    (tmp_path / "pyproject.toml").write_text('[tool.fabric-lsp]\nselect = ["FAB001"]\n')
    return tmp_path


def golden(name: str, got: str) -> None:
    """Compare with tests/cli/golden/<name>; FABRIC_LSP_UPDATE_GOLDEN=1 rewrites it."""
    path = GOLDEN / name
    if os.environ.get("FABRIC_LSP_UPDATE_GOLDEN") == "1":
        path.write_text(got, encoding="utf-8")
    assert got == path.read_text(encoding="utf-8")


def test_text_output_names_the_cell(work):
    r = cli("check", "train.ipynb", "fixable.ipynb", "bad.ipynb", cwd=work)
    assert r.returncode == 1, r.stderr
    golden("check.txt", r.stdout)
    assert r.stderr.splitlines() == [
        "bad.ipynb: error: not a valid notebook: invalid JSON"
        " (Expecting ',' delimiter: line 4 column 1 (char 78)); skipped"
    ]


def test_json_output_follows_ruff(work):
    r = cli("check", "--format", "json", "train.ipynb", "fixable.ipynb", cwd=work)
    assert r.returncode == 1, r.stderr
    golden("check.json", r.stdout)
    rows = json.loads(r.stdout)
    assert [(x["filename"], x["cell"], x["location"], x["noqa_row"]) for x in rows] == [
        ("train.ipynb", 4, {"row": 2, "column": 13}, 2),
        ("fixable.ipynb", 5, {"row": 5, "column": 13}, 5),
    ]
    assert rows[0]["fix"] is None  # its edits would span cells 3 and 4
    assert {e["location"]["row"] for e in rows[1]["fix"]["edits"]} == {3, 5}
    assert [(x["cell"], x["location"]["row"]) for x in rows[0]["related"]] == [(1, 4), (1, 4), (3, 4)]
    plain = cli("check", "--format", "json", REPO / "examples" / "train_deepspeed.py", cwd=work)
    assert [x["cell"] for x in json.loads(plain.stdout)] == [None]  # as ruff: null outside notebooks


def test_fix_keeps_outputs_ids_metadata_and_formatting(work):
    before = (work / "fixable.ipynb").read_text(encoding="utf-8")
    r = cli("check", "--fix", "fixable.ipynb", cwd=work)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Fixed 1 problem." in r.stdout
    after = (work / "fixable.ipynb").read_text(encoding="utf-8")
    golden("fixable.fixed.ipynb", after)
    changed = [line for line in difflib.ndiff(before.splitlines(), after.splitlines()) if line[:1] in "+-"]
    assert changed == [
        '-         "model = fabric.setup_module(model)\\n",',
        '-         "optimizer = fabric.setup_optimizers(optimizer)\\n",',
        '+         "model, optimizer = fabric.setup(model, optimizer)\\n",',
    ]
    old, new = json.loads(before), json.loads(after)
    assert [(c["id"], c.get("outputs"), c["metadata"]) for c in old["cells"]] == [
        (c["id"], c.get("outputs"), c["metadata"]) for c in new["cells"]
    ]
    nbformat.validate(nbformat.reads(after, as_version=4))
    assert not list(work.glob(".fabric-lsp-*"))
    again = cli("check", "--fix", "fixable.ipynb", cwd=work)
    assert again.returncode == 0 and (work / "fixable.ipynb").read_text(encoding="utf-8") == after


def test_fix_spanning_two_cells_is_refused(work):
    before = (work / "train.ipynb").read_bytes()
    r = cli("check", "--fix", "train.ipynb", cwd=work)
    assert r.returncode == 1 and "train.ipynb:cell 4:2:13: FAB001" in r.stdout
    assert "Fixed" not in r.stdout
    assert (work / "train.ipynb").read_bytes() == before


def test_diff_shows_cells_and_changes_nothing(work):
    before = (work / "fixable.ipynb").read_bytes()
    r = cli("check", "--diff", "train.ipynb", "fixable.ipynb", cwd=work)
    assert r.returncode == 1, r.stderr
    golden("fixable.diff", r.stdout)
    assert (work / "fixable.ipynb").read_bytes() == before


def test_bad_json_is_one_line_and_left_unchanged(work):
    before = (work / "bad.ipynb").read_bytes()
    for args in (["check"], ["check", "--fix"], ["check", "--diff"]):
        r = cli(*args, "bad.ipynb", cwd=work)
        assert r.returncode == 2
        assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith(
            "bad.ipynb: error: not a valid notebook: invalid JSON ("
        )
        assert (work / "bad.ipynb").read_bytes() == before
    (work / "list.ipynb").write_text("[1, 2]")
    r = cli("check", "list.ipynb", cwd=work)
    assert r.returncode == 2 and r.stderr == "list.ipynb: error: not a valid notebook: no `cells` list; skipped\n"


def test_folders_include_notebooks_and_exclude_applies(work):
    checkpoints = work / "sub" / ".ipynb_checkpoints"
    checkpoints.mkdir(parents=True)
    shutil.copy(DATA / "train.ipynb", checkpoints / "train-checkpoint.ipynb")
    shutil.copy(DATA / "train.ipynb", work / "sub" / "copy.ipynb")
    (work / "bad.ipynb").unlink()
    r = cli("check", "--format", "json", ".", cwd=work)
    assert sorted({x["filename"] for x in json.loads(r.stdout)}) == ["fixable.ipynb", "sub/copy.ipynb", "train.ipynb"]
    (work / "pyproject.toml").write_text('[tool.fabric-lsp]\nextend-exclude = ["*.ipynb"]\n')
    r = cli("check", ".", cwd=work)
    assert (r.returncode, r.stdout) == (0, "")  # nothing left to check, and it says so
    assert r.stderr.startswith("fabric-lsp: warning: nothing to check") and len(r.stderr.splitlines()) == 1


def test_stdin_notebook_fix_writes_the_notebook_json(work):
    text = (work / "fixable.ipynb").read_text(encoding="utf-8")
    r = cli("check", "--fix", "--stdin-filename", "fixable.ipynb", "-", cwd=work, stdin=text)
    assert r.returncode == 0, r.stderr
    assert r.stdout == (GOLDEN / "fixable.fixed.ipynb").read_text(encoding="utf-8")


def test_sarif_and_github_point_into_the_ipynb_file(work):
    raw = (work / "fixable.ipynb").read_text(encoding="utf-8").splitlines()
    r = cli("check", "--format", "sarif", "train.ipynb", "fixable.ipynb", cwd=work)
    log = json.loads(r.stdout)
    jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text(encoding="utf-8")))
    result = log["runs"][0]["results"][1]
    region = result["locations"][0]["physicalLocation"]["region"]
    line = raw[region["startLine"] - 1]
    assert line[region["startColumn"] - 1 : region["endColumn"] - 1] == "fabric.setup_optimizers(optimizer)"
    assert region["properties"] == {
        "cell": 5,
        "cellRegion": {"startLine": 5, "startColumn": 13, "endLine": 5, "endColumn": 47},
    }
    strategy = result["relatedLocations"][0]["physicalLocation"]["region"]
    assert raw[strategy["startLine"] - 1][strategy["startColumn"] - 1 : strategy["endColumn"] - 1] == '\\"deepspeed\\"'
    assert "fixes" not in result

    gh = cli("check", "--format", "github", "fixable.ipynb", cwd=work)
    (annotation,) = gh.stdout.splitlines()
    assert annotation.startswith(f"::error file=fixable.ipynb,line={region['startLine']},col={region['startColumn']},")
    assert "::cell 5:5:13: `fabric.setup_optimizers(...)`" in annotation
