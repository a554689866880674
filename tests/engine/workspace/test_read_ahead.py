"""Reading ahead (:meth:`Workspace.reading_ahead`, what a check's forker does while the command
line walks the project and whenever it waits for its next message): every file's words, then the
modules most files name, most named first — a file at a time, so that the reader may stop between
any two and resume there."""

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


def _read_all(workspace: Workspace) -> list[str]:
    return list(workspace.reading_ahead())


def test_the_modules_most_files_name_are_parsed_ahead(tmp_path):
    workspace = _project(tmp_path, HUB_IMPORTERS)
    _read_all(workspace)
    # `hub` may be imported by HUB_IMPORTERS files, its package by them and `hub.py` in it;
    # `lonely` by one file only
    assert _parsed(workspace) == {"hub.py", "__init__.py"}
    assert all(path in workspace._words for path in workspace.python_files())


def test_too_few_importers_parse_nothing_ahead(tmp_path):
    workspace = _project(tmp_path, HUB_IMPORTERS - 2)  # `pkg`: one user and `hub.py` in it
    _read_all(workspace)
    assert _parsed(workspace) == set()


def test_reading_ahead_goes_a_file_at_a_time_and_resumes_where_it_stopped(tmp_path):
    workspace = _project(tmp_path, HUB_IMPORTERS)
    ahead = workspace.reading_ahead()
    first = [next(ahead), next(ahead)]  # two files' words, then the reader stops
    assert set(workspace._words) == set(first) and _parsed(workspace) == set()
    rest = list(ahead)  # resumed: the other files' words, then the hub and its package
    files = workspace.python_files()
    assert first + rest[: len(files) - 2] == files
    assert sorted(p.rsplit("/", 1)[-1] for p in rest[len(files) - 2 :]) == ["__init__.py", "hub.py"]
    assert _parsed(workspace) == {"hub.py", "__init__.py"}


def test_what_is_read_ahead_is_what_an_analysis_reads(tmp_path):
    ahead = _project(tmp_path, HUB_IMPORTERS)
    _read_all(ahead)
    fresh = Workspace(str(tmp_path), one_run=True)
    name = "helper"
    assert [m.path for m in ahead.modules_mentioning(name)] == [m.path for m in fresh.modules_mentioning(name)]
    hub = str(tmp_path / "pkg" / "hub.py")
    assert ahead.load_path(hub) is ahead.load_path(hub)  # the module parsed ahead is the one analyses get
