"""The cache's answers to "which files mention this word" are reused from the previous run where
the files are unchanged: after any edits (files changed, added, removed), the reused answers equal
a fresh run's (a property test), and an unchanged project reads no file's words at all."""

from __future__ import annotations

import os
import re
from pathlib import Path

from fabric_lsp.documents.cache import World
from fabric_lsp.engine.workspace.files import python_files
from fabric_lsp.engine.workspace.workspace import Workspace
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

WORDS = ["make_fabric", "Fabric", "setup", "train", "éfabric", "fabric_2"]
FILES = ["a.py", "b.py", "pkg/c.py", "pkg/d.py"]
TEXTS = st.lists(st.sampled_from([*WORDS, " ", "\n", ".", "(", "é"]), max_size=8).map("".join)
EDITS = st.lists(st.tuples(st.sampled_from(FILES), st.none() | TEXTS), max_size=5)


def _write(root: Path, edits) -> None:
    for name, text in edits:
        path = root / name
        if text is None:
            path.unlink(missing_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")


def _answers(world: World) -> dict:
    return {w: world.mentioning(w) for w in WORDS}


def _truth(root: Path) -> dict:
    """The files that mention each word, in the project's listing order, read afresh here."""
    texts = {p: Path(p).read_text(encoding="utf-8") for p in python_files(str(root))}
    return {w: [p for p, text in texts.items() if w in re.findall(r"\w+", text)] for w in WORDS}


def _paths(answers: dict) -> dict:
    return {w: [p for p, _ in found] for w, found in answers.items()}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(before=EDITS, after=EDITS, asked=st.lists(st.sampled_from(WORDS), min_size=1))
def test_reused_answers_equal_a_fresh_run(tmp_path_factory, before, after, asked):
    root = tmp_path_factory.mktemp("world")
    _write(root, before)
    known = _asked(World(str(root)), asked).remembered()
    _write(root, after)
    again = World(str(root), known=known)
    assert _answers(again) == _answers(World(str(root)))
    assert _paths(_answers(again)) == _truth(root)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    before=EDITS,
    after=EDITS,
    earlier=st.none() | st.lists(st.sampled_from(WORDS)),
    together=st.lists(st.sampled_from([*WORDS, "not a word", "x.y"])),
)
@example(before=[("a.py", "Fabric"), ("pkg/c.py", "Fabric setup")], after=[], earlier=None, together=["Fabric"])
@example(before=[("a.py", "setup"), ("b.py", "setup")], after=[("b.py", None)], earlier=["train"], together=["setup"])
def test_answers_made_together_equal_answers_made_one_by_one(tmp_path_factory, before, after, earlier, together):
    """``mentioning_all`` (a cold run's entries, kept at once) answers as each word asked alone,
    with or without an earlier run's answers, whatever was asked before."""
    root = tmp_path_factory.mktemp("world")
    _write(root, before)
    known = None if earlier is None else _asked(World(str(root)), earlier).remembered()
    _write(root, after)
    batched = World(str(root), known=known)
    batched.mentioning_all(together)
    assert _answers(batched) == _answers(World(str(root), known=known)) == _answers(World(str(root)))
    assert _paths(_answers(batched)) == _truth(root)
    one_by_one = _asked(World(str(root), known=known), together)
    _answers(one_by_one)
    assert batched.remembered() == one_by_one.remembered()


def _asked(world: World, words: list[str]) -> World:
    """``world``, asked which files mention each of ``words`` in turn."""
    for w in words:
        world.mentioning(w)
    return world


def test_an_unchanged_project_reads_no_words(tmp_path, monkeypatch):
    _write(tmp_path, [("a.py", "make_fabric()\n"), ("b.py", "x = 1\n")])
    first = World(str(tmp_path))
    assert [Path(p).name for p, _ in first.mentioning("make_fabric")] == ["a.py"]
    again = World(str(tmp_path), known=first.remembered())
    monkeypatch.setattr(World, "word_sets", lambda self: (_ for _ in ()).throw(AssertionError("words read")))
    monkeypatch.setattr(World, "_words_of", lambda self, p: (_ for _ in ()).throw(AssertionError("words read")))
    assert [Path(p).name for p, _ in again.mentioning("make_fabric")] == ["a.py"]


def test_the_notebooks_an_analysis_read_are_a_listing_the_cache_follows_at_any_depth(tmp_path):
    """Whether a notebook may fit a model (PL003/PL004 read every notebook of the project) depends
    on notebooks at any depth: a notebook added six folders down changes the state of an entry
    that read them, and the analysis records that it did."""
    from fabric_lsp.engine.program.lightning_modules import _notebook_runs
    from fabric_lsp.engine.workspace.dependencies import NOTEBOOKS, Dependencies
    from fabric_lsp.engine.workspace.workspace import Workspace

    workspace = Workspace(str(tmp_path))
    with workspace.recording() as recorder:
        assert not _notebook_runs(workspace, str(tmp_path))
    assert NOTEBOOKS in recorder.freeze().listings
    deps = Dependencies(listings=frozenset({NOTEBOOKS}))
    before = World(str(tmp_path)).state(deps)
    deep = tmp_path / "a" / "b" / "c" / "d" / "e" / "f"
    deep.mkdir(parents=True)
    (deep / "Train.IPYNB").write_text('{"cells": [{"source": ["trainer.fit(model)"]}]}')
    assert World(str(tmp_path)).state(deps) != before
    assert _notebook_runs(Workspace(str(tmp_path)), str(tmp_path))


def test_a_server_worker_tells_which_files_mention_the_words_its_analysis_looked_up(tmp_path, monkeypatch):
    """A worker of the server's workspace report gives, with each module's findings, the files that
    mention the words its analysis looked up (each word once per unit of work): the answers the report's
    cache would find reading every file's words."""
    from fabric_lsp.config import Config
    from fabric_lsp.documents import workers
    from fabric_lsp.documents.analyzers import Analyzers

    helpers = "def fit(fabric, model, optimizer):\n    model = fabric.setup_module(model)\n    fabric.setup_optimizers(optimizer)\n"
    train = "from lightning.fabric import Fabric\nfrom helpers import fit\n\nfit(Fabric(strategy='deepspeed'), m, o)\n"
    (tmp_path / "helpers.py").write_text(helpers)
    (tmp_path / "train.py").write_text(train)
    (tmp_path / "other.py").write_text("x = 1  # fit\n")
    monkeypatch.setattr(workers, "_STATE", {"analyzers": Analyzers(Workspace(str(tmp_path)))})
    first, second = workers._analyse_chunk([workers.Job(str(tmp_path / "helpers.py"), helpers, Config())] * 2)
    assert first is not None and second is not None
    assert "FAB001" in [f.code for f in first.findings]  # on the Fabric of train.py's call
    assert set(first.mentioned) == {n for n in first.deps.mentions if re.fullmatch(r"\w+", n)}
    assert [os.path.basename(p) for p in first.mentioned["fit"]] == ["helpers.py", "other.py", "train.py"]
    assert second.mentioned == {}  # told once in a unit of work
    afresh = World(str(tmp_path))
    assert {n: tuple(p for p, _ in afresh.mentioning(n)) for n in first.mentioned} == first.mentioned
