"""Where the workspace finds a module: its own files first; jedi (the analysed environment) only
for names that are not the workspace's own packages."""

from __future__ import annotations

from pathlib import Path

from fabric_lsp.engine.workspace.workspace import Workspace


def _project(tmp_path: Path) -> Workspace:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "sub" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "sub" / "mod.py").write_text("def build(): ...\n")
    return Workspace(str(tmp_path))


def test_a_module_of_the_workspace_is_found_in_it(tmp_path, monkeypatch):
    ws = _project(tmp_path)
    monkeypatch.setattr(Workspace, "_jedi_module_path", lambda *a: (_ for _ in ()).throw(AssertionError("jedi asked")))
    assert ws.find_module_path("pkg.sub.mod", None) == str(tmp_path / "pkg" / "sub" / "mod.py")


def test_a_name_in_a_workspace_package_that_is_no_module_is_not_asked_of_jedi(tmp_path, monkeypatch):
    # `pkg.sub.mod.build` is a function: an import of `pkg` finds the workspace's package first
    ws = _project(tmp_path)
    monkeypatch.setattr(Workspace, "_jedi_module_path", lambda *a: (_ for _ in ()).throw(AssertionError("jedi asked")))
    assert ws.find_module_path("pkg.sub.mod.build", None) is None
    assert ws.find_module_path("pkg.missing", None) is None


def test_another_package_is_asked_of_jedi(tmp_path, monkeypatch):
    ws = _project(tmp_path)
    asked = []
    monkeypatch.setattr(Workspace, "_jedi_module_path", lambda self, q, p: asked.append(q))
    ws.find_module_path("otherlib.thing", None)
    assert asked == ["otherlib.thing"]
