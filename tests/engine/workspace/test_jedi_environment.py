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


def test_a_single_threaded_workspace_uses_it_for_the_running_interpreter_only(tmp_path):
    assert isinstance(Workspace(str(tmp_path), single_threaded=True).jedi_environment, LazySubprocessEnvironment)
    assert not isinstance(Workspace(str(tmp_path)).jedi_environment, LazySubprocessEnvironment)  # the server's threads
    named = Workspace(str(tmp_path), sys.executable, single_threaded=True).jedi_environment  # --environment: as before
    assert not isinstance(named, LazySubprocessEnvironment)
