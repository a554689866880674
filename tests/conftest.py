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


#: how a process marks its reads of a Lightning version (``{marks}``: the folder of the marks)
_MARKER = """\
import os

def _marked(real, what):
    def read(*args):
        with open(os.path.join({marks!r}, f"{{what}}-read-by-{{os.getpid()}}"), "w") as fh:
            fh.write(repr(args))
        return real(*args)
    return read
"""
#: what a fresh interpreter (a spawned worker) loads at its start from ``version_reads``' site
#: folder: it marks its reads as the fixture marks this process's (it takes no monkeypatch from here)
_MARKING_SITE = (
    _MARKER
    + """
from fabric_lsp import declared_version, facts

declared_version.read_declared = _marked(declared_version.read_declared, "declared")
facts._read_lightning_version = _marked(facts._read_lightning_version, "installed")
"""
)


class VersionReads:
    """The marks left by the processes that read a Lightning version (``declared-read-by-PID``,
    ``installed-read-by-PID``), sorted, when called; ``site``: a folder whose ``sitecustomize``
    makes a fresh interpreter started with it on its ``PYTHONPATH`` leave them too."""

    def __init__(self, marks: Path, site: Path) -> None:
        self.marks, self.site = marks, site  # the site out of the project: no file of it is checked
        (self.site / "sitecustomize.py").write_text(_MARKING_SITE.format(marks=str(marks)))

    def __call__(self) -> list[str]:
        return sorted(p.name for p in self.marks.glob("*-read-by-*"))


@pytest.fixture
def version_reads(tmp_path, tmp_path_factory, monkeypatch) -> VersionReads:
    """A project (``tmp_path``) that declares its Lightning version, of which no process has read
    the declared version or the installed one yet: each process that reads either leaves a mark
    (:class:`VersionReads`)."""
    from fabric_lsp import declared_version, facts

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["lightning==2.1.0"]\n')
    declared_version.forget()
    monkeypatch.setattr(facts, "_VERSION_CACHE", {})
    marker: dict = {}
    exec(_MARKER.format(marks=str(tmp_path)), marker)  # noqa: S102 - the same marking as a spawned worker's
    marked = marker["_marked"]
    monkeypatch.setattr(declared_version, "read_declared", marked(declared_version.read_declared, "declared"))
    monkeypatch.setattr(facts, "_read_lightning_version", marked(facts._read_lightning_version, "installed"))
    return VersionReads(tmp_path, tmp_path_factory.mktemp("marking-site"))
