"""Fixtures for the runtime proof: a venv with real torch (CPU) + lightning + deepspeed.

The venv lives at ``<repo>/.venv-runtime`` and is made by ``.ci/install.d/30-runtime.sh`` (which CI
runs before pytest). The ``runtime_python`` fixture runs that script once per session: it returns
at once when the venv is complete, and installs it otherwise. An install that fails is a test
failure under CI (``CI=true``); on a developer's machine the runtime tests are then skipped with
the reason shown (``-ra``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-runtime"
INSTALL = ROOT / ".ci" / "install.d" / "30-runtime.sh"
INSTALL_TIMEOUT = 1200  # a fresh install takes ~100 s here (torch from disk, deepspeed JIT op build)
SCRIPT_TIMEOUT = 180  # one training script takes ~4-5 s

# Variables a surrounding distributed launcher might have set; a fixture script must start alone.
_DIST_VARS = (
    "MASTER_ADDR", "MASTER_PORT", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",
    "NODE_RANK", "GROUP_RANK", "LOCAL_SIZE", "CUDA_VISIBLE_DEVICES",
    "LT_ACCELERATOR", "LT_STRATEGY", "LT_DEVICES", "LT_NUM_NODES", "LT_PRECISION", "LT_CLI_USED",
)


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes", "on")


@pytest.fixture(scope="session")
def runtime_python() -> Path:
    """The runtime venv's interpreter, installing the venv first if it is missing or incomplete."""
    python = VENV / "bin" / "python"
    try:
        proc = subprocess.run(
            ["bash", str(INSTALL)], cwd=ROOT, capture_output=True, text=True, timeout=INSTALL_TIMEOUT
        )
        ok, detail = proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    except (OSError, subprocess.TimeoutExpired) as exc:
        ok, detail = False, repr(exc)
    if not ok or not python.exists():
        message = f"runtime venv {VENV} could not be installed by {INSTALL.relative_to(ROOT)}: {detail}"
        if _in_ci():
            pytest.fail(message)  # never a silent skip in CI
        pytest.skip(message)
    return python


@pytest.fixture(scope="session")
def runtime_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DIST_VARS}
    for key in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV"):
        env.pop(key, None)
    env["DS_ACCELERATOR"] = "cpu"
    env["TORCH_EXTENSIONS_DIR"] = str(VENV / "torch_extensions")  # the op the installer built
    env["PYTHONNOUSERSITE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    env["OMP_NUM_THREADS"] = "1"  # 2 shared cores; the models are tiny
    return env


@dataclass
class Run:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    def explain(self) -> str:
        return (
            f"$ {' '.join(self.args)}\nexit {self.returncode}\n"
            f"--- stdout (tail) ---\n{self.stdout[-4000:]}\n--- stderr (tail) ---\n{self.stderr[-6000:]}"
        )


@pytest.fixture
def run_script(runtime_python: Path, runtime_env: dict[str, str]):
    """Run a training script with the runtime venv's python, in the script's own folder."""

    def run(script: Path) -> Run:
        args = [str(runtime_python), str(script)]
        try:
            proc = subprocess.run(
                args, cwd=script.parent, env=runtime_env, capture_output=True, text=True, timeout=SCRIPT_TIMEOUT
            )
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"{script.name} did not finish within {SCRIPT_TIMEOUT}s: {exc}")
        return Run(args, proc.returncode, proc.stdout, proc.stderr)

    return run


@pytest.fixture
def fabric_lsp():
    """Run ``python -m fabric_lsp ...`` with the interpreter running pytest (the project venv)."""

    def run(*args: str, cwd: Path) -> Run:
        cmd = [sys.executable, "-m", "fabric_lsp", *args]
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)
        return Run(cmd, proc.returncode, proc.stdout, proc.stderr)

    return run
