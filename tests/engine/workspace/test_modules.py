"""Where the workspace finds a module: its own files first; the analysed environment (through jedi
where it is another interpreter) only for names that are not the workspace's own packages."""

from __future__ import annotations

import sys
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


def test_another_package_is_asked_of_jedi_where_another_interpreter_is_analysed(tmp_path, monkeypatch):
    """Where the analysed environment is this interpreter, jedi's answer is found without it
    (``test_module_finder.py``)."""
    _project(tmp_path)
    asked = []
    monkeypatch.setattr(Workspace, "_jedi_module_path", lambda self, q, p: asked.append(q))
    Workspace(str(tmp_path)).find_module_path("otherlib.thing", None)
    assert asked == []
    Workspace(str(tmp_path), sys.executable).find_module_path("otherlib.thing", None)
    assert asked == ["otherlib.thing"]


# -- a document's module is the workspace's module of its file ----------------------------------------
_LIB = "from lightning.fabric import Fabric\n\ndef make():\n    return Fabric(strategy='deepspeed')\n"
_MAIN = "from lib import make\nfabric = make()\nfabric.setup_module(model)\nfabric.setup_optimizers(opt)\n"


def _files(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "lib.py").write_text(_LIB)
    (tmp_path / "main.py").write_text(_MAIN)
    return tmp_path / "lib.py", tmp_path / "main.py"


def _parses(monkeypatch) -> list[str]:
    from fabric_lsp.engine.python import modules

    parsed: list[str] = []
    real = modules.ModuleInfo.__init__
    monkeypatch.setattr(
        modules.ModuleInfo,
        "__init__",
        lambda self, text, path=None, name=None: parsed.append(path) or real(self, text, path, name),
    )
    return parsed


def test_a_file_checked_and_imported_is_parsed_once(tmp_path, monkeypatch):
    """The command line analyses `lib.py` and `main.py`, which imports it: `lib.py` is parsed once,
    its module shared by its own analysis and by `main.py`'s, in either order; the findings are
    those of separate parses."""
    from fabric_lsp.engine.analyzer import Analyzer
    from fabric_lsp.rules import ALL_RULES

    lib, main = _files(tmp_path)
    expected = [f.code for f in Analyzer(Workspace(str(tmp_path)), ALL_RULES).analyze(_MAIN, str(main))]
    assert "FAB001" in expected
    for order in ((lib, main), (main, lib)):
        parsed = _parses(monkeypatch)
        analyzer = Analyzer(Workspace(str(tmp_path)), ALL_RULES)
        found = {p: [f.code for f in analyzer.analyze(p.read_text(), str(p))] for p in order}
        assert found[main] == expected
        assert sorted(parsed) == sorted([str(lib), str(main)])
        monkeypatch.undo()


def test_a_document_whose_text_is_not_the_files_is_not_the_files_module(tmp_path):
    lib, _ = _files(tmp_path)
    ws = Workspace(str(tmp_path))
    edited = ws.document_module(_LIB + "x = 1\n", str(lib))
    assert ws.load_path(str(lib)) is not edited
    assert ws.load_path(str(lib)).text == _LIB
    assert ws.document_module(_LIB, str(lib)) is ws.load_path(str(lib))


def test_a_document_with_unsaved_text_is_the_module_of_that_text(tmp_path):
    lib, _ = _files(tmp_path)
    unsaved = _LIB + "y = 2\n"
    ws = Workspace(str(tmp_path), overlay=lambda path: unsaved if path == str(lib) else None)
    module = ws.document_module(unsaved, str(lib))
    assert ws.load_path(str(lib)) is module
