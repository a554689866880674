"""Fixtures for the runtime proof: a venv with real torch (CPU) + lightning + deepspeed.

The venv lives at ``<repo>/.venv-runtime`` and is made by ``.ci/install.d/30-runtime.sh`` (which CI
runs before pytest). The ``runtime_python`` fixture runs that script once per session: it returns
at once when the venv is complete, and installs it otherwise. An install that fails is a test
failure under CI (``CI=true``); on a developer's machine the runtime tests are then skipped with
the reason shown (``-ra``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest
from ci_env import in_ci

#: the scripts the proofs run (some are named ``test_*.py`` after the entry point they prove)
collect_ignore_glob = ["rules/*", "cases/*", "branches/*", "controls/*"]

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-runtime"
INSTALL = ROOT / ".ci" / "install.d" / "30-runtime.sh"
INSTALL_TIMEOUT = 1200  # a fresh install takes ~100 s here (torch from disk, deepspeed JIT op build)
GROUP_GRACE = 30  # seconds the other ranks get to exit after the launching process
SCRIPT_TIMEOUT = 180  # one training script takes ~4-5 s (a 2-process DDP one ~8 s) on an idle machine
#: what libstdc++ prints when a process exits while a gloo thread still runs (torch's
#: process-group teardown, now and then under load): the work before it is done
TEARDOWN_ABORT = "terminate called without an active exception"
#: what torch prints when the rendezvous port it was given, or found free, was taken meanwhile
#: (Lightning's ``find_free_network_port`` frees the port before torch listens on it: two scripts
#: started together can draw the same one); the run did not start, so it is started again
PORT_TAKEN = "EADDRINUSE"
#: how many times such a run is started again
TEARDOWN_RETRIES = 2
#: seconds a script may run after printing RUNTIME-OK before it counts as hung in teardown
TEARDOWN_GRACE = 60  # longer than the PL001 scripts' 30 s gloo timeout: a rank stuck in a collective fails first

# Variables a surrounding distributed launcher might have set; a fixture script must start alone.
_DIST_VARS = (
    "MASTER_ADDR",
    "MASTER_PORT",
    "RANK",
    "LOCAL_RANK",
    "WORLD_SIZE",
    "LOCAL_WORLD_SIZE",
    "NODE_RANK",
    "GROUP_RANK",
    "LOCAL_SIZE",
    "CUDA_VISIBLE_DEVICES",
    "LT_ACCELERATOR",
    "LT_STRATEGY",
    "LT_DEVICES",
    "LT_NUM_NODES",
    "LT_PRECISION",
    "LT_CLI_USED",
)


def _venv() -> Path:
    """The venv by its real path. DeepSpeed's CPU op build (build.ninja) records torch's include paths
    as the interpreter sees them; run through a symlinked venv (a git worktree sharing one), another
    path rebuilds the op (~1-2 min) and invalidates it for every other user of the same venv."""
    return VENV.resolve()


@pytest.fixture(scope="session")
def runtime_python() -> Path:
    """The runtime venv's interpreter, installing the venv first if it is missing or incomplete."""
    python = _venv() / "bin" / "python"
    try:
        proc = subprocess.run(["bash", str(INSTALL)], cwd=ROOT, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
        ok, detail = proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    except (OSError, subprocess.TimeoutExpired) as exc:
        ok, detail = False, repr(exc)
    if not ok or not python.exists():
        message = f"runtime venv {VENV} could not be installed by {INSTALL.relative_to(ROOT)}: {detail}"
        if in_ci():
            pytest.fail(message)  # never a silent skip in CI
        pytest.skip(message)
    return python


@pytest.fixture(scope="session")
def runtime_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DIST_VARS}
    for key in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV"):
        env.pop(key, None)
    env["DS_ACCELERATOR"] = "cpu"
    env["TORCH_EXTENSIONS_DIR"] = str(_venv() / "torch_extensions")  # the op the installer built
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


class Started:
    """A training script running in the background; ``result()`` waits for it.

    The script runs in a session of its own: the processes it launches (DDP ranks, spawned workers)
    are killed with it when it times out or the test ends, never left behind waiting for a peer.
    """

    def __init__(self, script: Path, python: Path, env: dict[str, str], args: tuple[str, ...] = ()) -> None:
        self.script = script
        self.args = [str(python), str(script), *args]
        self._env = env
        # Output goes to files, not pipes: a chatty script can never block on a full pipe.
        stem = script.name + "".join(f".{a.strip('-')}" for a in args)
        self._out = script.with_name(stem + ".stdout")
        self._err = script.with_name(stem + ".stderr")
        self._start()

    def _start(self) -> None:
        with open(self._out, "wb") as out, open(self._err, "wb") as err:
            self.proc = subprocess.Popen(
                self.args, cwd=self.script.parent, env=self._env, stdout=out, stderr=err, start_new_session=True
            )

    def result(self) -> Run:
        """Wait for the script (a hang after ``RUNTIME-OK``: see :meth:`_wait`). A run that aborted
        in torch's teardown after its work (``terminate called without an active exception``: a
        gloo thread still running at exit) is run up to twice more (twice in a row was seen on a
        loaded 2-core machine); so is a run whose rendezvous port was taken (:data:`PORT_TAKEN`:
        seen once in a full CI run). Where the last run aborted in that teardown too, with no
        traceback (no rank failed before it: three in a row were seen in a full CI run), the
        work under proof was done: it counts as run, as a hang in the same teardown does."""
        run = self._wait()
        for _ in range(TEARDOWN_RETRIES):
            if run.returncode == 0 or not (_aborted_after_work(run) or PORT_TAKEN in run.stderr):
                break
            self._start()
            run = self._wait()
        if run.returncode != 0 and _aborted_after_work(run) and "Traceback" not in run.stderr:
            return self._counted_as_run(run, "aborted in torch's teardown after RUNTIME-OK")
        return run

    def _wait(self) -> Run:
        """Wait for the script; one that still runs ``TEARDOWN_GRACE`` seconds after it printed
        ``RUNTIME-OK`` hung in torch's process-group teardown after its work (spawned gloo
        workers, now and then on a loaded machine: seen for minutes): it is killed and counts as
        run (exit 0, the hang noted in its stderr and as a warning), as the work under proof is
        done. One that never prints it within ``SCRIPT_TIMEOUT`` fails."""
        started, done_at = time.monotonic(), None
        while self.proc.poll() is None:
            now = time.monotonic()
            if done_at is None and "RUNTIME-OK" in self._read(self._out):
                done_at = now
            if done_at is not None and now - done_at > TEARDOWN_GRACE:
                return self._hung_after_work()
            if now - started > SCRIPT_TIMEOUT:
                self.kill()
                pytest.fail(
                    f"{' '.join(self.args[1:])} did not finish within {SCRIPT_TIMEOUT}s\n{self._read(self._out)[-4000:]}"
                )
            time.sleep(0.2)
        self._drain_group()
        return Run(self.args, self.proc.returncode, self._read(self._out), self._read(self._err))

    def _hung_after_work(self) -> Run:
        self.kill()
        run = Run(self.args, -signal.SIGKILL, self._read(self._out), self._read(self._err))
        return self._counted_as_run(run, f"still running {TEARDOWN_GRACE}s after RUNTIME-OK (torch teardown); killed")

    def _counted_as_run(self, run: Run, what: str) -> Run:
        """``run`` as one that ran (exit 0), what happened in its teardown noted in its stderr
        and as a warning."""
        note = f"{' '.join(self.args[1:])}: {what}, counted as run (exit {run.returncode})"
        warnings.warn(note, stacklevel=3)
        return Run(self.args, 0, run.stdout, run.stderr + "\n[" + note + "]")

    @staticmethod
    def _read(path: Path) -> str:
        return path.read_bytes().decode("utf-8", "replace")

    def kill(self) -> None:
        self._kill_group()
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def _drain_group(self) -> None:
        """Wait for the other ranks to exit (a rank may print its last line after rank 0 is gone);
        kill what is left after GROUP_GRACE seconds (a rank whose peer crashed may wait forever)."""
        deadline = time.monotonic() + GROUP_GRACE
        while time.monotonic() < deadline:
            try:
                os.killpg(self.proc.pid, 0)
            except (ProcessLookupError, PermissionError):
                return
            time.sleep(0.1)
        self._kill_group()

    def _kill_group(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):  # the session has already exited
            os.killpg(self.proc.pid, signal.SIGKILL)


def _aborted_after_work(run: Run) -> bool:
    """Whether ``run`` printed ``RUNTIME-OK`` and then aborted in torch's teardown."""
    return "RUNTIME-OK" in run.stdout and TEARDOWN_ABORT in run.stderr


@pytest.fixture
def start_script(runtime_python: Path, runtime_env: dict[str, str]):
    """Start a training script with the runtime venv's python, in the script's own folder.

    Lets a test overlap the run of the original with fixing and running the copy (2 cores).
    Anything still running when the test ends is killed.
    """
    started: list[Started] = []

    def start(script: Path, *args: str, env: dict[str, str] | None = None) -> Started:
        started.append(Started(script, runtime_python, runtime_env if env is None else env, args))
        return started[-1]

    yield start
    for s in started:
        s.kill()


@pytest.fixture
def run_script(start_script):
    """Run a training script with the runtime venv's python and wait for it."""

    def run(script: Path, *args: str) -> Run:
        return start_script(script, *args).result()

    return run


@pytest.fixture
def fabric_lsp():
    """Run ``python -m fabric_lsp ...`` with the interpreter running pytest (the project venv)."""

    def run(*args: str, cwd: Path) -> Run:
        cmd = [sys.executable, "-m", "fabric_lsp", *args]
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)
        return Run(cmd, proc.returncode, proc.stdout, proc.stderr)

    return run
