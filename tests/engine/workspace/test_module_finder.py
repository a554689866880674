"""Modules of the running interpreter found without jedi (:mod:`fabric_lsp.engine.workspace.module_finder`):
the same file jedi's ``goto`` finds on an ``import`` line, for every kind of module, or "ask jedi"
where the finder does not mirror it — and a check that finds its modules so never imports jedi."""

from __future__ import annotations

import sys

import pytest
from fabric_lsp.engine.workspace import module_finder
from fabric_lsp.engine.workspace.workspace import Workspace

from tests.cli.test_cli import _imported_by


def _project(root):
    files = {
        "pkg/__init__.py": "",
        "pkg/mod.py": "X = 1\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/run.py": "",
        "pkg/sub/local.py": "",
        "nspkg/inner.py": "",  # a namespace package: no __init__
        "scripts/run.py": "",  # a folder of scripts: no __init__
        "scripts/helper.py": "",
        "extended/__init__.py": "from pkgutil import extend_path\n__path__ = extend_path(__path__, __name__)\n",
        "extended/part.py": "",
        "json/__init__.py": "",  # the project's own ``json`` comes before the standard library's
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


NAMES = [
    "pkg",
    "pkg.mod",
    "pkg.mod.X",  # an attribute: a module has no submodule
    "pkg.missing",
    "pkg.sub.local",
    "local",  # found from pkg/sub/run.py only: jedi searches the importer's folders too
    "helper",  # found from scripts/run.py only
    "nspkg",
    "nspkg.inner",
    "json",
    "json.decoder",
    "argparse",
    "os",  # frozen: its source is still found
    "importlib.machinery",
    "sys",  # built in
    "math",  # built in or compiled
    "_json",
    "pytest",
    "_pytest.python",
    "no_such_module",
    "gi",
]


@pytest.mark.parametrize("importer", [None, "main.py", "scripts/run.py", "pkg/sub/run.py"])
def test_a_module_is_found_where_jedi_finds_it(tmp_path, importer):
    _project(tmp_path)
    workspace = Workspace(str(tmp_path), one_run=True)
    path = str(tmp_path / importer) if importer else None
    asked = 0
    for name in NAMES:
        mine = workspace._found_here(name, path)
        if mine == module_finder.ASK_JEDI:
            asked += 1
            continue
        assert mine == workspace._jedi_module_path(name, path), name
    assert asked == 0
    # the project's own ``json`` is found (the project's folder comes first), the standard
    # library's ``argparse``, a module of the importer's folder only from there
    assert workspace._found_here("json", path) == str(tmp_path / "json" / "__init__.py")
    assert workspace._found_here("argparse", path).endswith("argparse.py")
    found = workspace._found_here("local", path)
    assert (found is not None) == (importer == "pkg/sub/run.py")


def test_what_it_does_not_mirror_is_left_to_jedi(tmp_path):
    """A package that extends its own ``__path__`` (jedi then searches every folder of its name),
    a project set up by buildout (jedi reads its scripts' paths), another environment."""
    _project(tmp_path)
    workspace = Workspace(str(tmp_path), one_run=True)
    assert workspace._found_here("extended.part", None) == module_finder.ASK_JEDI
    (tmp_path / "buildout.cfg").write_text("[buildout]\n")
    assert workspace._found_here("pkg.mod", str(tmp_path / "main.py")) == module_finder.ASK_JEDI
    assert Workspace(str(tmp_path), sys.executable)._found_here("pkg.mod", None) == module_finder.ASK_JEDI


def test_the_search_path_is_jedis(tmp_path):
    """The project's folder first, the environment's path without ``""``, then the folders from
    the project's down to the importer's, each once."""
    project = str(tmp_path)
    importer = str(tmp_path / "a" / "b" / "c.py")
    base = ["", "/usr/lib/python3", project]
    assert module_finder.search_path(base, project, importer) == [
        project,
        "/usr/lib/python3",
        str(tmp_path / "a"),
        str(tmp_path / "a" / "b"),
    ]
    assert module_finder.search_path(base, project, "/elsewhere/x.py") == [project, "/usr/lib/python3"]


def test_a_check_that_finds_its_modules_so_never_imports_jedi(tmp_path):
    """In one process and with workers (forked after the preload), a project whose Fabric code
    imports installed packages and the standard library is checked without importing jedi."""
    code = (
        "import json\nimport pytest\nfrom lightning.fabric import Fabric\n\n"
        "fabric = Fabric(devices=pytest.helper(json.loads('2')))\nfabric.launch()\n"
    )
    for i in range(30):
        (tmp_path / f"train_{i}.py").write_text(code)
    for jobs in ("1", "2"):
        run = f"try:\n    main(['check', '--no-cache', '--jobs', '{jobs}', '.'])\nexcept SystemExit:\n    pass"
        assert "jedi" not in _imported_by(run, tmp_path), jobs
