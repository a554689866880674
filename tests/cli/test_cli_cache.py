"""`fabric-lsp check`'s persistent cache: an unchanged project is re-checked from it, an edit
re-checks what depends on it, and the results with and without it are the same (a property
test over random edits to a multi-module workspace)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

TRAIN = """\
import torch
from helpers import make_fabric

fabric = make_fabric()
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(2, 2))
optimizer = fabric.setup_optimizers(torch.optim.SGD(model.parameters(), lr=0.1))
"""
HELPERS = """\
from lightning.fabric import Fabric


def make_fabric():
    return Fabric(strategy={strategy!r}, devices=1)
"""


def check(root: Path, *extra: str) -> tuple[list, str]:
    env = {**os.environ, "FABRIC_LSP_DEBUG": "1"}
    r = subprocess.run(
        [sys.executable, "-m", "fabric_lsp", "check", ".", "--format", "json", "--exit-zero", *extra],
        capture_output=True,
        text=True,
        cwd=root,
        env=env,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    found = sorted(
        (Path(x["filename"]).name, x["code"], x["location"]["row"], x["severity"], x["message"]) for x in rows
    )
    return found, r.stderr


def hits(stderr: str) -> str:
    return next(line for line in stderr.splitlines() if "from the cache" in line)


def test_unchanged_project_comes_from_the_cache_and_an_edit_rechecks_its_dependents(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "helpers.py").write_text(HELPERS.format(strategy="deepspeed"))
    (tmp_path / "other.py").write_text("x = 1\n")
    first, err = check(tmp_path)
    assert [f[:2] for f in first] == [("train.py", "FAB001")]
    assert hits(err) == "fabric-lsp: 0 of 3 files from the cache"
    assert (tmp_path / ".fabric_lsp_cache" / ".gitignore").read_text().splitlines()[-1] == "*"
    again, err = check(tmp_path)
    assert again == first and hits(err) == "fabric-lsp: 3 of 3 files from the cache"
    # train.py read helpers.py: changing it re-checks both, other.py still comes from the cache
    (tmp_path / "helpers.py").write_text(HELPERS.format(strategy="ddp"))
    edited, err = check(tmp_path)
    assert edited == [] and hits(err) == "fabric-lsp: 1 of 3 files from the cache"
    assert check(tmp_path, "--no-cache")[0] == edited


def test_a_module_that_appears_rechecks_the_files_that_looked_for_it(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    assert check(tmp_path)[0] == []  # `helpers` cannot be found: nothing is known of the Fabric
    (tmp_path / "helpers.py").write_text(HELPERS.format(strategy="deepspeed"))
    found, _ = check(tmp_path)
    assert [f[:2] for f in found] == [("train.py", "FAB001")]


def test_cache_dir_option_and_setting(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "helpers.py").write_text(HELPERS.format(strategy="deepspeed"))
    check(tmp_path, "--cache-dir", "elsewhere")
    assert (tmp_path / "elsewhere" / ".gitignore").exists() and not (tmp_path / ".fabric_lsp_cache").exists()
    (tmp_path / "pyproject.toml").write_text('[tool.fabric-lsp]\ncache-dir = "build/cache"\n')
    check(tmp_path)
    assert (tmp_path / "build" / "cache" / ".gitignore").exists()
    check(tmp_path, "--no-cache")
    assert not (tmp_path / ".fabric_lsp_cache").exists()


def test_an_unreadable_cache_is_ignored(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "helpers.py").write_text(HELPERS.format(strategy="deepspeed"))
    first, _ = check(tmp_path)
    for pickle in (tmp_path / ".fabric_lsp_cache").rglob("*.pickle"):
        pickle.write_bytes(b"not a pickle")
    again, err = check(tmp_path)
    assert again == first and hits(err) == "fabric-lsp: 0 of 2 files from the cache"


# -- the property: with the cache == without it, whatever is edited -------------------------------
STRATEGIES = ["deepspeed", "ddp", "xla", "auto"]
EDITS = st.one_of(
    st.tuples(st.just("helpers"), st.sampled_from(STRATEGIES + [None])),  # None: helpers.py deleted
    st.tuples(st.just("train"), st.sampled_from(["import", "inline", "joint", None])),
    st.tuples(st.just("script"), st.sampled_from(["fabric run --devices=2 train.py", "torchrun train.py", None])),
    st.tuples(
        st.just("other"),
        st.sampled_from(
            ["x = 1\n", "from helpers import make_fabric\nf = make_fabric()\nf.setup_optimizers(o)\n", None]
        ),
    ),
)
TRAINS = {
    "import": TRAIN,
    "inline": TRAIN.replace("from helpers import make_fabric", "from lightning.fabric import Fabric").replace(
        "make_fabric()", 'Fabric(strategy="deepspeed")'
    ),
    "joint": TRAIN.replace(
        "model = fabric.setup_module(torch.nn.Linear(2, 2))\noptimizer = fabric.setup_optimizers(",
        "model, optimizer = fabric.setup(torch.nn.Linear(2, 2), ",
    ).replace("lr=0.1))", "lr=0.1))"),
}


def _apply(root: Path, edit: tuple[str, str | None]) -> None:
    kind, value = edit
    path = {"helpers": "helpers.py", "train": "train.py", "script": "job.sh", "other": "other.py"}[kind]
    if value is None:
        (root / path).unlink(missing_ok=True)
        return
    text = {
        "helpers": lambda v: HELPERS.format(strategy=v),
        "train": TRAINS.get,
        "script": lambda v: f"#!/bin/bash\n#SBATCH --nodes=1\n{v}\n",
        "other": lambda v: v,
    }[kind](value)
    (root / path).write_text(text)


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(EDITS, min_size=1, max_size=4))
def test_cached_results_equal_a_fresh_run(tmp_path_factory, edits):
    root = tmp_path_factory.mktemp("ws")
    (root / "train.py").write_text(TRAIN)
    (root / "helpers.py").write_text(HELPERS.format(strategy="deepspeed"))
    check(root)  # fills the cache
    for edit in edits:
        _apply(root, edit)
        cached, _ = check(root)
        fresh, _ = check(root, "--no-cache")
        assert cached == fresh, edits


def test_a_cache_kept_while_workers_analyse_is_the_one_kept_after(tmp_path):
    """With worker processes, the project's digests are read on a thread while they analyse
    (``World.prepare``), and the workers tell which files mention the words their analyses looked
    up: the entries kept are those a run in one process keeps, and the next run reuses every one."""
    (tmp_path / "helpers.py").write_text(HELPERS.format(strategy="deepspeed"))
    for i in range(30):
        (tmp_path / f"train_{i}.py").write_text(TRAIN)
    first, _ = check(tmp_path, "--jobs", "2")
    again, err = check(tmp_path, "--jobs", "2")
    fresh, _ = check(tmp_path, "--no-cache", "--jobs", "1")
    assert first == again == fresh and len(first) >= 30
    assert hits(err) == "fabric-lsp: 31 of 31 files from the cache"


def test_words_read_ahead_are_the_words_read_when_asked(tmp_path):
    from fabric_lsp.documents.cache import World

    (tmp_path / "a.py").write_text("make_fabric()\n")
    (tmp_path / "b.py").write_text("x = 1  # make_fabric\n")
    (tmp_path / "c.py").write_text("é = make_fabricé\n")
    ahead, asked = World(str(tmp_path)), World(str(tmp_path))
    ahead.prepare()
    assert ahead.mentioning("make_fabric") == asked.mentioning("make_fabric")
    assert ahead.remembered() == asked.remembered()
