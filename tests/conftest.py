"""Shared fixtures: an analysed environment with `lightning` installed (source only)."""

from __future__ import annotations

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
