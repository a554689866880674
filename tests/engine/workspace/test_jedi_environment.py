"""The running interpreter as jedi's environment without jedi's subprocess (the command line's
processes): the same ``sys.path`` and the same modules found, and no subprocess until jedi
needs to import something."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import fabric_lsp
import jedi
from fabric_lsp.engine.workspace.jedi_environment import LazySubprocessEnvironment, subprocess_sys_path
from fabric_lsp.engine.workspace.workspace import Workspace


def test_the_sys_path_is_the_one_jedis_subprocess_reports():
    """Checked in a fresh interpreter (a test runner adds folders to its own ``sys.path``), run
    as ``-c`` and with ``PYTHONSAFEPATH``; not known (None) under a flag that changes it."""
    probe = textwrap.dedent(
        """
        import sys, jedi
        from fabric_lsp.engine.workspace.jedi_environment import subprocess_sys_path
        mine = subprocess_sys_path()
        print(mine is None or mine == jedi.create_environment(sys.executable, safe=False).get_sys_path(), mine is None)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(Path(fabric_lsp.__file__).resolve().parents[1])}
    for flags, extra, known in (
        ([], {}, True),
        ([], {"PYTHONSAFEPATH": "1"}, True),
        (["-P"], {}, False),
        (["-s"], {}, False),
    ):
        r = subprocess.run(
            [sys.executable, *flags, "-c", probe], capture_output=True, text=True, timeout=120, env={**env, **extra}
        )
        assert r.returncode == 0, r.stderr
        assert r.stdout.split() == ["True", str(not known)], (flags, extra)


def test_modules_are_found_as_with_jedis_environment_and_no_subprocess_starts(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "mod.py").write_text("X = 1\n")
    script = tmp_path / "main.py"
    lazy = LazySubprocessEnvironment(subprocess_sys_path() or sys.path)
    project = jedi.Project(path=str(tmp_path), smart_sys_path=True, load_unsafe_extensions=False)
    for name in ("pkg.mod", "json.decoder", "jedi.api", "no_such_module", "os.path"):
        code = f"import {name}\n"
        found = [
            sorted(
                str(n.module_path)
                for n in jedi.Script(code, path=str(script), project=project, environment=env).goto(
                    1, len(code) - 1, follow_imports=True
                )
            )
            for env in (lazy, jedi.create_environment(sys.executable, safe=False))
        ]
        assert found[0] == found[1], name
    assert lazy._subprocess is None  # module look-ups never started jedi's subprocess


def test_a_one_run_workspace_uses_it_for_the_running_interpreter_only(tmp_path):
    assert isinstance(Workspace(str(tmp_path), one_run=True).jedi_environment, LazySubprocessEnvironment)
    assert not isinstance(Workspace(str(tmp_path)).jedi_environment, LazySubprocessEnvironment)  # the server's threads
    named = Workspace(str(tmp_path), sys.executable, one_run=True).jedi_environment  # --environment: as before
    assert not isinstance(named, LazySubprocessEnvironment)


def test_a_one_run_workspace_keeps_every_module_jedi_parses_once_it_asks_jedi(tmp_path, monkeypatch):
    """parso's cache of parsed modules (jedi's) is kept whole in a one-run process, raised where
    jedi's environment is made (every parse of jedi's comes after it): a process whose analyses
    never ask jedi does not import parso for it."""
    import parso.cache

    monkeypatch.setattr(parso.cache, "_CACHED_SIZE_TRIGGER", 600)
    assert Workspace(str(tmp_path)).jedi_environment is not None
    assert parso.cache._CACHED_SIZE_TRIGGER == 600  # the server's workspace: parso's own setting
    one_run = Workspace(str(tmp_path), one_run=True)
    assert parso.cache._CACHED_SIZE_TRIGGER == 600  # nothing asked of jedi yet
    assert one_run.jedi_environment is not None
    assert sys.maxsize == parso.cache._CACHED_SIZE_TRIGGER
    monkeypatch.setattr(parso.cache, "_CACHED_SIZE_TRIGGER", 600)
    assert Workspace(str(tmp_path), sys.executable, one_run=True).jedi_environment is not None  # --environment
    assert sys.maxsize == parso.cache._CACHED_SIZE_TRIGGER


def test_a_one_run_process_imports_neither_parso_nor_jedi_for_an_analysis_that_asks_neither(tmp_path):
    """In a fresh interpreter: a worker's first analysis costs no import of parso (22 ms) where
    nothing asks jedi."""
    (tmp_path / "train.py").write_text("from lightning.fabric import Fabric\n\nfabric = Fabric()\nfabric.launch()\n")
    probe = textwrap.dedent(
        f"""
        import sys
        from fabric_lsp.config import Config
        from fabric_lsp.documents import check
        from fabric_lsp.documents.analyzers import for_one_run
        path = {str(tmp_path / "train.py")!r}
        analyzers = for_one_run({str(tmp_path)!r}, None)
        config = Config()
        check.analysis(analyzers.for_config(config), config, open(path).read(), path)
        print("parso" in sys.modules, "jedi" in sys.modules)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(Path(fabric_lsp.__file__).resolve().parents[1])}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
