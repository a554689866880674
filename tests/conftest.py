"""Shared fixtures: an analysed environment with `lightning` installed (source only)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from ci_env import in_ci

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "tests" / ".artifacts"
LIGHTNING_VERSION = "2.6.6"


def ensure_lightning_env() -> Path:
    """A venv with `lightning` (no torch: jedi only reads its source). Built once, reused."""
    venv = ARTIFACTS / "venv-lightning"
    python = venv / "bin" / "python"
    marker = venv / f".lightning-{LIGHTNING_VERSION}"
    if not marker.exists():
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--no-deps", f"lightning=={LIGHTNING_VERSION}"],
            check=True,
        )
        marker.touch()
    return venv


@pytest.fixture(scope="session")
def lightning_env() -> Path:
    return ensure_lightning_env()


@pytest.fixture(params=["without-lightning", "with-lightning"], scope="session")
def analysed_env(request):
    """Run a test once against the server's own environment (no lightning) and once against an
    environment where lightning is installed."""
    if request.param == "with-lightning":
        return str(ensure_lightning_env())
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under CI, a test that skips itself fails: a skipped editor or runtime test proves nothing
    (the suites fail with the missing tool's name themselves; this catches any that would not)."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail") and in_ci():
        report.outcome = "failed"
        report.longrepr = f"CI=true and the test skipped: {report.longrepr}"


@pytest.fixture
def version_reads(tmp_path, monkeypatch):
    """A project (``tmp_path``) that declares its Lightning version, of which no process has read
    the declared version or the installed one yet: each process that reads either leaves a mark.
    Gives the marks left so far (``declared-read-by-PID``, ``installed-read-by-PID``), sorted."""
    from fabric_lsp import declared_version, facts

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["lightning==2.1.0"]\n')
    declared_version.forget()
    monkeypatch.setattr(facts, "_VERSION_CACHE", {})

    def marked(real, what: str):
        def read(*args):
            (tmp_path / f"{what}-read-by-{os.getpid()}").write_text(repr(args))
            return real(*args)

        return read

    monkeypatch.setattr(declared_version, "read_declared", marked(declared_version.read_declared, "declared"))
    monkeypatch.setattr(facts, "_read_lightning_version", marked(facts._read_lightning_version, "installed"))
    return lambda: sorted(p.name for p in tmp_path.glob("*-read-by-*"))
