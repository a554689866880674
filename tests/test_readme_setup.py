"""The README's two commands set fabric-lsp up the same way, as ``.ci/run`` does: the editable
install, then its bytecode compiled once. An editable install writes none, and where
``PYTHONDONTWRITEBYTECODE`` is set (as on the machines this project is measured on) no run writes
it either: every process would compile the whole package again (+0.18 s on litgpt's check)."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _readme_commands() -> list[str]:
    block = re.search(r"```sh\n(.*?)```", (REPO / "README.md").read_text(), re.DOTALL)
    assert block is not None, "README.md starts with a sh block of its two commands"
    return [line for line in block.group(1).splitlines() if line.strip()]


def _steps(command: str) -> list[str]:
    return [step.strip() for step in command.split("&&")]


def test_both_commands_set_up_alike_and_compile_the_bytecode():
    first, second = _readme_commands()
    setup = _steps(first)[:-1]
    assert _steps(second)[:-1] == setup
    assert any("compileall" in step for step in setup)
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    for step in setup[1:]:  # the venv is made by .ci/run too, its pip upgraded between
        assert any(line.split("  #")[0].strip() == step for line in ci), f".ci/run lacks the README's `{step}`"


def test_the_compile_step_leaves_bytecode_for_every_module_where_none_would_be_written(tmp_path):
    (step,) = [s for s in _steps(_readme_commands()[0]) if "compileall" in s]
    argv = shlex.split(step)
    assert argv[0] == ".venv/bin/python"
    shutil.copytree(
        REPO / "server" / "fabric_lsp", tmp_path / "server" / "fabric_lsp", ignore=shutil.ignore_patterns("__pycache__")
    )
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run([sys.executable, *argv[1:]], cwd=tmp_path, env=env, check=True)
    modules = sorted((tmp_path / "server" / "fabric_lsp").rglob("*.py"))
    assert len(modules) > 100
    missing = [m for m in modules if not Path(importlib.util.cache_from_source(str(m))).is_file()]
    assert missing == []
