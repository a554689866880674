"""Reading ahead (:meth:`Workspace.read_ahead`, what a check's forker does while the command line
walks the project): every file's words, then the modules most files name, most named first —
each step only while ``stop()`` says nothing else waits."""

from __future__ import annotations

from fabric_lsp.engine.workspace.workspace import HUB_IMPORTERS, Workspace


def _project(tmp_path, importers: int):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "hub.py").write_text("def helper(fabric):\n    return fabric\n")
    (tmp_path / "lonely.py").write_text("X = 1\n")
    for i in range(importers):
        (tmp_path / f"user{i}.py").write_text("from pkg.hub import helper\n")
    (tmp_path / "other.py").write_text("import lonely\n")
    return Workspace(str(tmp_path), one_run=True)


def _parsed(workspace: Workspace) -> set[str]:
    return {path.rsplit("/", 1)[-1] for path in workspace.parsed_paths()}


def test_the_modules_most_files_name_are_parsed_ahead(tmp_path):
    workspace = _project(tmp_path, HUB_IMPORTERS)
    workspace.read_ahead(lambda: False)
    # `hub` may be imported by HUB_IMPORTERS files, its package by them and `hub.py` in it;
    # `lonely` by one file only
    assert _parsed(workspace) == {"hub.py", "__init__.py"}
    assert all(path in workspace._words for path in workspace.python_files())


def test_too_few_importers_parse_nothing_ahead(tmp_path):
    workspace = _project(tmp_path, HUB_IMPORTERS - 2)  # `pkg`: one user and `hub.py` in it
    workspace.read_ahead(lambda: False)
    assert _parsed(workspace) == set()


def test_reading_ahead_stops_when_told(tmp_path):
    workspace = _project(tmp_path, HUB_IMPORTERS)
    asked: list[int] = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) > 2  # two files' words, then something waits

    workspace.read_ahead(stop)
    assert len(workspace._words) == 2 and _parsed(workspace) == set()


def test_what_is_read_ahead_is_what_an_analysis_reads(tmp_path):
    ahead = _project(tmp_path, HUB_IMPORTERS)
    ahead.read_ahead(lambda: False)
    fresh = Workspace(str(tmp_path), one_run=True)
    name = "helper"
    assert [m.path for m in ahead.modules_mentioning(name)] == [m.path for m in fresh.modules_mentioning(name)]
    hub = str(tmp_path / "pkg" / "hub.py")
    assert ahead.load_path(hub) is ahead.load_path(hub)  # the module parsed ahead is the one analyses get
