"""End-to-end test of the VS Code extension (vscode-client/) in a real VS Code.

code-server (the VS Code workbench and extension host, from npm) runs the packaged .vsix, built
with `npm run package` (the server and its dependencies bundled in it); Debian's Chromium, driven
by playwright-core (tests/editors/vscode/e2e.mjs), clicks through it like a user. The interpreter
is a fresh venv without fabric-lsp: the FAB001 error squiggle and Problems row, the quick fix via
Ctrl+. and Enter, save, the problem gone; a warning for a strategy that may be DeepSpeed; nothing
for DDP; non-ASCII identifiers; the interpreter's own packages analysed, not the bundled ones; fix
on save with the user's `fabric-lsp.path` executable; `importStrategy: fromEnvironment` (the
installed server, or the bundled one when there is none); the interpreter from the Python
extension; the restart command; a settings change; exactly one notification when the interpreter
is missing or too old, the installed server broken, or the server crashing. And the bundled server
over LSP (pytest-lsp) under every Python >= 3.9 found on the machine.
FAB010: the finding in train.py and in the SLURM script job.sbatch it launches (the client selects
shell scripts), each at its line.

Tools come from .ci/install.d/20-vscode.sh. When they are missing the test fails if CI is set
(.ci/run should have installed them); otherwise it runs that script on first use (apt needs root
or sudo) and skips, saying why, if that does not work. FABRIC_LSP_NO_INSTALL=1 skips instead.
Screenshots of every step go to tests/.artifacts/vscode/.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from ci_env import in_ci

# The first test may install the tools (see `tools`), so it may take longer than the default 300 s.
INSTALL_TIMEOUT = 420
pytestmark = [pytest.mark.editor, pytest.mark.timeout(INSTALL_TIMEOUT + 240)]

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "vscode-client"
DRIVER_DIR = Path(__file__).resolve().parent / "vscode"
DRIVER = DRIVER_DIR / "e2e.mjs"
INSTALL_SCRIPT = ROOT / ".ci" / "install.d" / "20-vscode.sh"
ARTIFACTS = ROOT / "tests" / ".artifacts" / "vscode"

CODE_SERVER_VERSION = "4.100.3"
TOOLS = Path(os.environ.get("FABRIC_LSP_EDITOR_TOOLS", "/opt/fabric-lsp-editors"))

QUICK_FIX_TITLE = "Set up model and optimizer jointly with `fabric.setup(...)`"

DEEPSPEED = """\
import torch
from lightning.fabric import Fabric

fabric = Fabric(strategy="deepspeed_stage_3")
fabric.launch()
model = torch.nn.Linear(4, 2)
model = fabric.setup_module(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)
"""

DEEPSPEED_FIXED = """\
import torch
from lightning.fabric import Fabric

fabric = Fabric(strategy="deepspeed_stage_3")
fabric.launch()
model = torch.nn.Linear(4, 2)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
model, optimizer = fabric.setup(model, optimizer)
"""

MAYBE_DEEPSPEED = """\
import sys

import torch
from lightning.fabric import Fabric

use_ds = "--deepspeed" in sys.argv
strategy = "deepspeed" if use_ds else "ddp"
fabric = Fabric(strategy=strategy)
fabric.launch()
model = torch.nn.Linear(4, 2)
model = fabric.setup_module(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)
"""

DDP = DEEPSPEED.replace('"deepspeed_stage_3"', '"ddp"')

# Non-ASCII identifiers before the call on the flagged line (𠮷 is outside the BMP: two UTF-16
# code units, four UTF-8 bytes), so the column differs between position encodings.
UNICODE_NAMES = """\
# 🚀 ü 漢字 𠮷: non-ASCII identifiers before the call on the flagged line
import torch
from lightning.fabric import Fabric

fabric = Fabric(strategy="deepspeed_stage_3")
fabric.launch()
modèle = torch.nn.Linear(4, 2)
modèle = fabric.setup_module(modèle)
optimiseur_漢字𠮷 = torch.optim.AdamW(modèle.parameters(), lr=1e-4)
optimiseur_漢字𠮷 = fabric.setup_optimizers(optimiseur_漢字𠮷)  # 🚀 ü
"""

UNICODE_NAMES_FIXED = """\
# 🚀 ü 漢字 𠮷: non-ASCII identifiers before the call on the flagged line
import torch
from lightning.fabric import Fabric

fabric = Fabric(strategy="deepspeed_stage_3")
fabric.launch()
modèle = torch.nn.Linear(4, 2)
optimiseur_漢字𠮷 = torch.optim.AdamW(modèle.parameters(), lr=1e-4)
modèle, optimiseur_漢字𠮷 = fabric.setup(modèle, optimiseur_漢字𠮷)  # 🚀 ü
"""


def _unavailable(message: str) -> None:
    """A missing tool: a failure under CI (a skipped editor test proves nothing), a skip elsewhere."""
    if in_ci():
        pytest.fail("CI=true and " + message, pytrace=False)
    pytest.skip(message)


def _flagged_position(text: str) -> tuple[int, int]:
    """1-based line and UTF-16 column (as VS Code shows them) of `fabric.setup_optimizers`."""
    for number, line in enumerate(text.splitlines(), start=1):
        if "fabric.setup_optimizers(" in line:
            prefix = line[: line.index("fabric.setup_optimizers(")]
            return number, len(prefix.encode("utf-16-le")) // 2 + 1
    raise AssertionError("no setup_optimizers call")


# --------------------------------------------------------------------------------------------
# Tools


def _code_server() -> Path:
    override = os.environ.get("FABRIC_LSP_CODE_SERVER")
    if override:
        return Path(override)
    return TOOLS / f"code-server-{CODE_SERVER_VERSION}" / "node_modules" / ".bin" / "code-server"


def _chromium() -> str | None:
    override = os.environ.get("FABRIC_LSP_CHROMIUM")
    if override:
        return override
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _missing_tools() -> list[str]:
    missing = []
    if not shutil.which("node"):
        missing.append("node (Node.js 20)")
    if not _code_server().exists():
        missing.append(f"code-server {CODE_SERVER_VERSION} at {_code_server()}")
    if not _chromium():
        missing.append("chromium (apt-get install chromium)")
    if not (DRIVER_DIR / "node_modules" / "playwright-core").is_dir():
        missing.append(f"playwright-core in {DRIVER_DIR / 'node_modules'} (npm ci there)")
    if not (CLIENT / "node_modules" / "@vscode" / "vsce").is_dir():
        missing.append(f"{CLIENT / 'node_modules'} (npm ci there)")
    return missing


@pytest.fixture(scope="module")
def tools() -> dict[str, str]:
    missing = _missing_tools()
    if missing and in_ci():
        pytest.fail(
            "CI is set but the VS Code end-to-end test is missing: "
            + "; ".join(missing)
            + f". {INSTALL_SCRIPT.relative_to(ROOT)} (run by .ci/run) should have installed them.",
            pytrace=False,
        )
    if missing and os.environ.get("FABRIC_LSP_NO_INSTALL") != "1":
        # Install on first use, like the other editor suites (needs root or sudo for apt).
        try:
            result = subprocess.run(
                ["bash", str(INSTALL_SCRIPT)], capture_output=True, text=True, timeout=INSTALL_TIMEOUT
            )
            output = (result.stdout + result.stderr)[-3000:]
        except subprocess.TimeoutExpired:
            output = f"timed out after {INSTALL_TIMEOUT} s"
        missing = _missing_tools()
        if missing:
            _unavailable(
                f"the VS Code end-to-end test needs: {'; '.join(missing)}, and "
                f"`bash {INSTALL_SCRIPT.relative_to(ROOT)}` could not install them:\n{output}"
            )
    if missing:
        _unavailable(f"FABRIC_LSP_NO_INSTALL=1 and missing: {'; '.join(missing)}")
    return {"code_server": str(_code_server()), "chromium": str(_chromium()), "node": str(shutil.which("node"))}


def _vsix_sources() -> list[Path]:
    """What the .vsix is built from: the extension, the bundling script and the server."""
    names = ("package.json", "package-lock.json", "README.md", "tsconfig.json", ".vscodeignore")
    sources = [CLIENT / name for name in names]
    sources += [ROOT / "pyproject.toml", ROOT / "README.md"]
    for folder in (CLIENT / "src", CLIENT / "scripts", CLIENT / "bundled" / "tool", ROOT / "server"):
        sources += [p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return sources


_built: list[Path] = []  # the .vsix built by this test session, if any


def _vsix(tmp: Path) -> Path:
    """The .vsix built from the current sources: the install script's if it is up to date, else
    one built now with `npm run package` (type check, esbuild, bundling the server from PyPI)."""
    newest_source = max(p.stat().st_mtime for p in _vsix_sources())
    built = sorted([*CLIENT.glob("fabric-lsp-*.vsix"), *_built], key=lambda p: p.stat().st_mtime)
    if built and built[-1].stat().st_mtime >= newest_source:
        return built[-1]
    vsix = tmp / "fabric-lsp.vsix"
    result = subprocess.run(
        ["npm", "run", "package", "--", "--out", str(vsix)],
        cwd=CLIENT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, f"npm run package failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    _built.append(vsix)
    return vsix


def _bare_venv(path: Path, packages: dict[str, str] | None = None, base: str = sys.executable) -> Path:
    """A fresh venv of `base` without pip or fabric-lsp, with `packages` ({"module/file.py": text})
    written into its site-packages. Returns its python."""
    subprocess.run([base, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    (site,) = path.glob("lib/python3.*/site-packages")
    for name, text in (packages or {}).items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(text)
    python = path / "bin" / "python"
    check = subprocess.run([str(python), "-c", "import fabric_lsp"], capture_output=True, timeout=60)
    assert check.returncode != 0, f"{python} has fabric_lsp: the test needs an interpreter without it"
    return python


def _python_extension_stub(tmp: Path, python: Path) -> Path:
    """A stand-in for the Python extension (ms-python.python, not reachable offline) whose
    `environments` API reports `python` as the selected interpreter."""
    stub = tmp / "python-extension-stub"
    stub.mkdir()
    (stub / "package.json").write_text(
        json.dumps(
            {
                "name": "python",
                "publisher": "ms-python",
                "displayName": "Python (test stub)",
                "description": "Test stub of the Python extension's environments API",
                "version": "2099.0.0",
                "license": "Apache-2.0",
                "engines": {"vscode": "^1.82.0"},
                "activationEvents": ["onLanguage:python"],
                "main": "./extension.js",
            }
        )
    )
    (stub / "README.md").write_text("Test stub of the Python extension's environments API.\n")
    (stub / "extension.js").write_text(
        f"""const vscode = require('vscode');
const executable = {json.dumps(str(python))};
exports.activate = () => ({{
    environments: {{
        getActiveEnvironmentPath: () => ({{ id: executable, path: executable }}),
        resolveEnvironment: async () => ({{ executable: {{ uri: vscode.Uri.file(executable) }} }}),
        onDidChangeActiveEnvironmentPath: new vscode.EventEmitter().event,
    }},
}});
"""
    )
    vsix = tmp / "ms-python-stub.vsix"
    result = subprocess.run(
        [
            str(CLIENT / "node_modules" / ".bin" / "vsce"),
            "package",
            "--allow-missing-repository",
            "--skip-license",
            "--out",
            str(vsix),
        ],
        cwd=stub,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, f"packaging the Python extension stub failed:\n{result.stdout}\n{result.stderr}"
    return vsix


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _stop(process: subprocess.Popen) -> None:
    """Ends the process group that `process` leads (it was started with start_new_session)."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        process.poll()
        return
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def code_server(tools, tmp_path_factory):
    """A running code-server with the fabric-lsp .vsix installed in private directories."""
    base = tmp_path_factory.mktemp("code-server")
    home = base / "home"
    user_data = base / "user-data"
    extensions = base / "extensions"
    for folder in (home, user_data / "User", extensions):
        folder.mkdir(parents=True)
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
    }
    env.pop("VSCODE_IPC_HOOK_CLI", None)
    # Quiet, deterministic workbench: no welcome page, tips, recommendations or update checks.
    (user_data / "User" / "settings.json").write_text(
        json.dumps(
            {
                "workbench.startupEditor": "none",
                "workbench.tips.enabled": False,
                "workbench.editor.enablePreview": False,
                "workbench.enableExperiments": False,
                "extensions.ignoreRecommendations": True,
                "extensions.autoCheckUpdates": False,
                "extensions.autoUpdate": False,
                "telemetry.telemetryLevel": "off",
                "update.mode": "none",
                "security.workspace.trust.enabled": False,
                "editor.minimap.enabled": False,
                "editor.fontSize": 15,
                "files.autoSave": "off",
                "chat.disableAIFeatures": True,
                "workbench.secondarySideBar.defaultVisibility": "hidden",
            },
            indent=2,
        )
    )
    common = ["--user-data-dir", str(user_data), "--extensions-dir", str(extensions)]
    # The interpreter the Python extension stub reports: a fresh venv without fabric-lsp.
    selected_python = _bare_venv(base / "selected-venv")
    stub = _python_extension_stub(base, selected_python)
    for vsix, installed in ((_vsix(base), "fabric-lsp.fabric-lsp-*"), (stub, "ms-python.python-*")):
        install = subprocess.run(
            [tools["code_server"], *common, "--install-extension", str(vsix)],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert install.returncode == 0, f"--install-extension {vsix} failed:\n{install.stdout}\n{install.stderr}"
        assert any(extensions.glob(installed)), f"{vsix} not installed:\n{install.stdout}\n{install.stderr}"

    port = _free_port()
    config = base / "config.yaml"
    config.write_text(f"bind-addr: 127.0.0.1:{port}\nauth: none\ncert: false\n")
    log = (base / "code-server.log").open("w")
    process = subprocess.Popen(
        [
            tools["code_server"],
            "--auth",
            "none",
            "--bind-addr",
            f"127.0.0.1:{port}",
            "--disable-telemetry",
            "--disable-update-check",
            "--disable-workspace-trust",
            "--disable-getting-started-override",
            "--config",
            str(config),
            *common,
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                pytest.fail(f"code-server exited with {process.returncode}:\n{(base / 'code-server.log').read_text()}")
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"code-server did not answer /healthz in 60 s:\n{(base / 'code-server.log').read_text()}")
            time.sleep(0.25)
        yield {
            "url": url,
            "base": base,
            "home": home,
            "user_data": user_data,
            "log": base / "code-server.log",
            "selected_python": selected_python,
            **tools,
        }
    finally:
        _stop(process)
        log.close()


def _workspace(root: Path, files: dict[str, str], settings: dict) -> Path:
    root.mkdir(parents=True)
    (root / ".vscode").mkdir()
    (root / ".vscode" / "settings.json").write_text(json.dumps(settings, indent=2))
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def _extension_logs(server: dict) -> str:
    """The fabric-lsp output channel(s) and the extension host log, for failure messages."""
    parts = []
    for log in sorted(Path(server["user_data"], "logs").rglob("*.log")):
        if "fabric-lsp" in log.name or log.name in ("exthost.log", "remoteexthost.log"):
            parts.append(f"--- {log.relative_to(server['user_data'])}\n{log.read_text(errors='replace')[-6000:]}")
    return "\n".join(parts)


def _drive(server: dict, mode: str, workspace: Path, artifacts: Path, **extra) -> dict:
    artifacts.mkdir(parents=True, exist_ok=True)
    for old in artifacts.glob("*.png"):
        old.unlink()
    config = {
        "mode": mode,
        "url": server["url"],
        "workspace": str(workspace),
        "artifacts": str(artifacts),
        "chromium": server["chromium"],
        "timeoutMs": 60000,
        "totalTimeoutMs": 200000,
        **extra,
    }
    config_file = workspace.parent / f"{mode}-driver.json"
    config_file.write_text(json.dumps(config))
    browser_home = server["base"] / f"browser-home-{mode}"
    browser_home.mkdir(exist_ok=True)
    # Its own session, so that a timeout also ends the Chromium it started.
    driver = subprocess.Popen(
        [server["node"], str(DRIVER), str(config_file)],
        cwd=DRIVER_DIR,
        env={**os.environ, "HOME": str(browser_home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = driver.communicate(timeout=230)
    except subprocess.TimeoutExpired:
        _stop(driver)
        stdout, stderr = driver.communicate()
        pytest.fail(f"the browser driver did not finish in 230 s:\n{stdout}\n{stderr}\n{_extension_logs(server)}")
    finally:
        _stop(driver)
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    (artifacts / "steps.jsonl").write_text(stdout)
    final = events[-1] if events else {}
    if driver.returncode != 0 or final.get("result") != "ok":
        pytest.fail(
            f"VS Code scenario '{mode}' failed (exit {driver.returncode}); screenshots in {artifacts}\n"
            f"{stdout}\n{stderr}\n{_extension_logs(server)}",
            pytrace=False,
        )
    return final


# --------------------------------------------------------------------------------------------
# Tests


def _assert_logged(server: dict, *lines: str) -> str:
    logs = _extension_logs(server)
    for line in lines:
        assert line in logs, f"{line!r} not in the logs:\n{logs}"
    return logs


def test_quick_fix_in_vscode(code_server, tmp_path):
    """With an interpreter that has no fabric-lsp (a fresh venv), the bundled server runs: FAB001
    error + squiggle, quick fix via Ctrl+. and Enter, save; warning case; clean case."""
    python = _bare_venv(tmp_path / "venv")
    files = {
        "train_deepspeed.py": DEEPSPEED,
        "train_maybe_deepspeed.py": MAYBE_DEEPSPEED,
        "train_ddp.py": DDP,
    }
    workspace = _workspace(tmp_path / "project", files, {"fabric-lsp.interpreter": str(python)})
    flagged, column = _flagged_position(DEEPSPEED)

    final = _drive(
        code_server,
        "quickfix",
        workspace,
        ARTIFACTS,
        files={"error": "train_deepspeed.py", "warning": "train_maybe_deepspeed.py", "clean": "train_ddp.py"},
        errorLine=flagged,
        errorColumn=column + 10,  # inside `setup_optimizers`
        expectPosition=f"[Ln {flagged}, Col {column}]",
        quickFixTitle=QUICK_FIX_TITLE,
        fixedLine="model, optimizer = fabric.setup(model, optimizer)",
    )

    assert (workspace / "train_deepspeed.py").read_text() == DEEPSPEED_FIXED
    assert (workspace / "train_maybe_deepspeed.py").read_text() == MAYBE_DEEPSPEED
    assert (workspace / "train_ddp.py").read_text() == DDP
    logs = _assert_logged(
        code_server,
        f"interpreter: {python} (from setting)",
        "server: bundled with the extension: fabric-lsp 0.1.0",
        f"analysed environment: {python}\n",
    )
    assert "pip install" not in logs, logs
    print(f"VS Code scenario passed in {final['seconds']:.1f} s; screenshots: {ARTIFACTS}")


# A module of the interpreter's environment named like one bundled with the server (tqdm): FAB001
# is found only if jedi resolves the import in that environment, not among the bundled libraries.
USER_PACKAGE = {
    "tqdm/__init__.py": """\
from lightning.fabric import Fabric


def make_fabric():
    return Fabric(strategy="deepspeed_stage_3")
""",
}

USES_USER_PACKAGE = """\
import torch
from tqdm import make_fabric

fabric = make_fabric()
fabric.launch()
model = torch.nn.Linear(4, 2)
model = fabric.setup_module(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)
"""


def test_bundled_server_analyses_the_interpreters_packages(code_server, tmp_path):
    """The bundled libraries are on the server's sys.path, not in the analysed environment: the
    interpreter's own `tqdm` (which creates a DeepSpeed Fabric) is the one followed."""
    python = _bare_venv(tmp_path / "venv", USER_PACKAGE)
    workspace = _workspace(
        tmp_path / "project-user-package",
        {"train_helper.py": USES_USER_PACKAGE},
        {"fabric-lsp.interpreter": str(python)},
    )
    flagged, column = _flagged_position(USES_USER_PACKAGE)
    _drive(
        code_server,
        "diagnostics",
        workspace,
        ARTIFACTS / "user-package",
        expect=[{"file": "train_helper.py", "severity": "error", "position": f"[Ln {flagged}, Col {column}]"}],
    )
    _assert_logged(code_server, f"analysed environment: {python}\n")


def test_import_strategy_from_environment(code_server, tmp_path):
    """importStrategy fromEnvironment: the fabric-lsp installed in the interpreter (the project's
    venv running this test) runs, and the output says so."""
    workspace = _workspace(
        tmp_path / "project-from-environment",
        {"train_deepspeed.py": DEEPSPEED},
        {"fabric-lsp.interpreter": sys.executable, "fabric-lsp.importStrategy": "fromEnvironment"},
    )
    flagged, column = _flagged_position(DEEPSPEED)
    _drive(
        code_server,
        "diagnostics",
        workspace,
        ARTIFACTS / "from-environment",
        expect=[{"file": "train_deepspeed.py", "severity": "error", "position": f"[Ln {flagged}, Col {column}]"}],
    )
    import fabric_lsp  # the project's, installed in the venv running this test

    installed = Path(fabric_lsp.__file__).parent
    _assert_logged(
        code_server,
        f"server: installed in the interpreter: fabric-lsp 0.1.0 in {installed}; run by {sys.executable}",
        f"command: {sys.executable} -m fabric_lsp\n",
    )


def test_import_strategy_from_environment_falls_back_to_bundled(code_server, tmp_path):
    """importStrategy fromEnvironment with an interpreter without fabric-lsp: the bundled server
    runs instead (as ruff's extension does), no notification."""
    python = _bare_venv(tmp_path / "venv")
    workspace = _workspace(
        tmp_path / "project-fallback",
        {"train_deepspeed.py": DEEPSPEED},
        {"fabric-lsp.interpreter": str(python), "fabric-lsp.importStrategy": "fromEnvironment"},
    )
    final = _drive(
        code_server,
        "diagnostics",
        workspace,
        ARTIFACTS / "fallback",
        expect=[{"file": "train_deepspeed.py", "severity": "error"}],
    )
    assert final["notifications"] == [], final
    _assert_logged(
        code_server,
        f"fabric-lsp is not installed in {python} (importStrategy fromEnvironment); using the bundled server",
        f"analysed environment: {python}\n",
    )


def _notebook() -> str:
    """A Jupyter notebook: the Fabric created in the first cell, a markdown cell, then a cell with
    an IPython magic, an output, and the two set-up calls."""

    def code(source: str, outputs: list) -> dict:
        lines = source.splitlines(keepends=True)
        return {
            "cell_type": "code",
            "execution_count": 1 if outputs else None,
            "id": f"c{len(source)}",
            "metadata": {},
            "outputs": outputs,
            "source": lines,
        }

    cells = [
        code('import torch\nfrom lightning.fabric import Fabric\n\nfabric = Fabric(strategy="deepspeed_stage_3")', []),
        {"cell_type": "markdown", "id": "md", "metadata": {}, "source": ["## Model and optimizer"]},
        code(
            "%matplotlib inline\nmodel = torch.nn.Linear(4, 2)\nmodel = fabric.setup_module(model)\n"
            "optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)\n"
            "optimizer = fabric.setup_optimizers(optimizer)",
            [{"name": "stdout", "output_type": "stream", "text": ["kept output\n"]}],
        ),
    ]
    metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    return json.dumps({"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


def test_quick_fix_in_a_notebook_cell(code_server, tmp_path):
    """A notebook: the squiggle in the cell that calls setup_optimizers (the Fabric is created in
    the first cell), the Problems row at the cell's line, the quick fix applied in the cell,
    saved as valid notebook JSON that keeps the cell's output."""
    settings = {"fabric-lsp.interpreter": sys.executable}
    # Cell 1's DeepSpeed Fabric is refused in a notebook (FAB011): this case is about FAB001 in cells.
    files = {"train.ipynb": _notebook(), "pyproject.toml": '[tool.fabric-lsp]\nselect = ["FAB001"]\n'}
    workspace = _workspace(tmp_path / "project-notebook", files, settings)
    _drive(
        code_server,
        "notebook",
        workspace,
        ARTIFACTS / "notebook",
        files={"notebook": "train.ipynb"},
        expectPosition="[Ln 5, Col 13]",
        quickFixTitle=QUICK_FIX_TITLE,
        fixedLine="model, optimizer = fabric.setup(model, optimizer)",
    )
    saved = json.loads((workspace / "train.ipynb").read_text())
    cell = saved["cells"][2]
    assert "".join(cell["source"]) == (
        "%matplotlib inline\nmodel = torch.nn.Linear(4, 2)\n"
        "optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)\n"
        "model, optimizer = fabric.setup(model, optimizer)"
    )
    assert cell["outputs"] == [{"name": "stdout", "output_type": "stream", "text": ["kept output\n"]}]
    assert [c["id"] for c in saved["cells"]] == [c["id"] for c in json.loads(_notebook())["cells"]]


def test_quick_fix_with_non_ascii_identifiers(code_server, tmp_path):
    """Positions survive UTF-16 (VS Code) columns: the problem is shown at the call, the quick
    fix rewrites the right text."""
    python = _bare_venv(tmp_path / "venv")
    workspace = _workspace(
        tmp_path / "project-unicode", {"train_unicode.py": UNICODE_NAMES}, {"fabric-lsp.interpreter": str(python)}
    )
    flagged, column = _flagged_position(UNICODE_NAMES)
    _drive(
        code_server,
        "quickfix",
        workspace,
        ARTIFACTS / "unicode",
        files={"error": "train_unicode.py"},
        errorLine=flagged,
        errorColumn=column + 10,
        expectPosition=f"[Ln {flagged}, Col {column}]",
        quickFixTitle=QUICK_FIX_TITLE,
        fixedLine="modèle, optimiseur_漢字𠮷 = fabric.setup(modèle, optimiseur_漢字𠮷)  # 🚀 ü",
    )
    assert (workspace / "train_unicode.py").read_text(encoding="utf-8") == UNICODE_NAMES_FIXED


# FAB010: a SLURM job script with one task per node launching a Fabric that wants two devices. The
# layout of FAB010's first INVALID example (the script next to the file it launches).
FAB010_TRAIN = """\
from lightning.fabric import Fabric

fabric = Fabric(devices=2, strategy="ddp", accelerator="cpu")
fabric.launch()
"""
FAB010_SCRIPT = """\
#!/bin/bash
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
srun python train.py
"""


# The same job as a `*.slurm` file without a shebang: VS Code gives it no shell language, the client
# selects it by its file name.
FAB010_EVALUATE = FAB010_TRAIN
FAB010_SLURM = """\
#SBATCH --ntasks-per-node=1
srun python evaluate.py
"""


def test_batch_script_mismatch_fab010(code_server, tmp_path):
    """FAB010 with the bundled server: the error at `devices=2` in train.py (the script's lines as
    related information), and in job.sbatch (a Shell Script through its #!/bin/bash line, which the
    client selects) on its `#SBATCH --ntasks-per-node=1` line; eval.slurm without a shebang (Plain
    Text, selected through its file name) gets its finding too."""
    python = _bare_venv(tmp_path / "venv")
    workspace = _workspace(
        tmp_path / "project-fab010",
        {
            "train.py": FAB010_TRAIN,
            "job.sbatch": FAB010_SCRIPT,
            "evaluate.py": FAB010_EVALUATE,
            "eval.slurm": FAB010_SLURM,
        },
        # verbose: the output channel shows the documents the client syncs
        {"fabric-lsp.interpreter": str(python), "fabric-lsp.trace.server": "verbose"},
    )
    column = FAB010_TRAIN.splitlines()[2].index("devices=2") + len("devices=") + 1
    final = _drive(
        code_server,
        "diagnostics",
        workspace,
        ARTIFACTS / "fab010",
        expect=[
            {"file": "train.py", "severity": "error", "code": "FAB010", "position": f"[Ln 3, Col {column}]"},
            {
                "file": "job.sbatch",
                "severity": "error",
                "code": "FAB010",
                "position": "[Ln 3, Col 1]",
                "contains": "srun python train.py",
                "language": "Shell Script",
            },
            {
                "file": "eval.slurm",
                "severity": "error",
                "code": "FAB010",
                "position": "[Ln 1, Col 1]",
                "contains": "srun python evaluate.py",
                "language": "Plain Text",
            },
        ],
    )
    assert final["notifications"] == [], final
    assert final["languages"] == {"job.sbatch": "Shell Script", "eval.slurm": "Plain Text"}, final
    for file, script in (("train.py", "job.sbatch"), ("job.sbatch", "job.sbatch"), ("eval.slurm", "eval.slurm")):
        [row] = final["problems"][file]
        # the message names the script; VS Code lists the related information (2 locations)
        assert f"in `{script}`" in row["label"], final
        assert "This problem has references to 2 locations" in row["label"], final
    # the client synced the scripts (didOpen): job.sbatch as a shell script, eval.slurm (Plain
    # Text) through the file-name selector, not only the workspace report of files not open
    assert _synced_documents(code_server, workspace) == {
        "train.py": "python",
        "job.sbatch": "shellscript",
        "eval.slurm": "plaintext",
    }, _extension_logs(code_server)


def _synced_documents(server: dict, workspace: Path) -> dict[str, str]:
    """{file name: languageId} of the documents of `workspace` the client opened on the server, from
    the output channel's verbose trace."""
    opened = {}
    for log in Path(server["user_data"], "logs").rglob("*fabric-lsp*.log"):
        text = log.read_text(errors="replace")
        for match in re.finditer(r"Sending notification 'textDocument/didOpen'\.\nParams: (\{.*?\n\})\n", text, re.S):
            document = json.loads(match.group(1))["textDocument"]
            if document["uri"].startswith(workspace.as_uri() + "/"):
                opened[document["uri"].rsplit("/", 1)[-1]] = document["languageId"]
    return opened


def test_missing_interpreter_shows_one_notification(code_server, tmp_path):
    """An interpreter that does not exist: one notification that names it and says what to do."""
    python = tmp_path / "no-such-venv" / "bin" / "python"
    workspace = _workspace(
        tmp_path / "project-without-interpreter",
        {"train_deepspeed.py": DEEPSPEED},
        {"fabric-lsp.interpreter": str(python)},
    )
    final = _drive(
        code_server,
        "missing-server",
        workspace,
        ARTIFACTS / "missing-interpreter",
        files={"error": "train_deepspeed.py"},
        expectNotification=[str(python), "was not found", "Python: Select Interpreter"],
    )
    assert final["notifications"] == 1, final


def test_old_python_shows_one_notification(code_server, tmp_path):
    """An interpreter older than 3.9 (a stand-in that answers the extension's check as Python 3.8
    does): one notification that names it and its version, no server started."""
    python = tmp_path / "python3.8"
    python.write_text('#!/bin/sh\n# answers the interpreter check as Python 3.8 does\necho "$0"\necho 3.8.18\nexit 4\n')
    python.chmod(0o755)
    workspace = _workspace(
        tmp_path / "project-old-python", {"train_deepspeed.py": DEEPSPEED}, {"fabric-lsp.interpreter": str(python)}
    )
    final = _drive(
        code_server,
        "missing-server",
        workspace,
        ARTIFACTS / "old-python",
        files={"error": "train_deepspeed.py"},
        expectNotification=["fabric-lsp needs Python 3.9 or newer", str(python), "3.8.18"],
    )
    assert final["notifications"] == 1, final


def test_interpreter_from_python_extension_and_restart(code_server, tmp_path):
    """No fabric-lsp.interpreter setting: the interpreter selected in the Python extension (here a
    stub of its API reporting a fresh venv) runs the bundled server and is analysed; "fabric-lsp:
    Restart server" restarts it and the diagnostics come back; setting fabric-lsp.certainSeverity
    to "warning" turns the error into a warning without a restart."""
    workspace = _workspace(tmp_path / "project-python-extension", {"train_deepspeed.py": DEEPSPEED}, {})
    _drive(
        code_server,
        "python-extension",
        workspace,
        ARTIFACTS / "python-extension",
        files={"error": "train_deepspeed.py"},
    )
    selected = code_server["selected_python"]
    _assert_logged(
        code_server,
        f"interpreter: {selected} (from Python extension)",
        f"analysed environment: {selected}\n",
        "(re)starting the server: restart command",
    )


def test_fix_all_on_save_with_server_executable(code_server, tmp_path):
    """editor.codeActionsOnSave {"source.fixAll.fabric-lsp": "explicit"}: Ctrl+S fixes the file.
    The server is the `fabric-lsp` executable from the fabric-lsp.path setting."""
    executable = Path(sys.executable).parent / "fabric-lsp"
    assert executable.exists(), f"{executable} missing: install the project (pip install -e .) into {sys.prefix}"
    workspace = _workspace(
        tmp_path / "project-fix-on-save",
        {"train_deepspeed.py": DEEPSPEED},
        {
            "fabric-lsp.path": str(executable),
            "[python]": {"editor.codeActionsOnSave": {"source.fixAll.fabric-lsp": "explicit"}},
        },
    )
    _drive(
        code_server,
        "fix-on-save",
        workspace,
        ARTIFACTS / "fix-on-save",
        files={"error": "train_deepspeed.py"},
        fixedLine="model, optimizer = fabric.setup(model, optimizer)",
    )
    assert (workspace / "train_deepspeed.py").read_text() == DEEPSPEED_FIXED
    _assert_logged(code_server, f"server: the fabric-lsp.path executable {executable}\n", f"command: {executable}\n")


def test_broken_install_shows_one_notification(code_server, tmp_path):
    """importStrategy fromEnvironment, fabric_lsp importable but its dependencies missing: one
    notification saying to reinstall (or to use the bundled server)."""
    broken = tmp_path / "broken-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(broken)], check=True, timeout=120)
    site = broken / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    (site / "fabric_lsp").mkdir(parents=True)
    (site / "fabric_lsp" / "__init__.py").write_text("")
    (site / "fabric_lsp" / "__main__.py").write_text("import pygls\n")
    python = broken / "bin" / "python"
    workspace = _workspace(
        tmp_path / "project-broken-install",
        {"train_deepspeed.py": DEEPSPEED},
        {"fabric-lsp.interpreter": str(python), "fabric-lsp.importStrategy": "fromEnvironment"},
    )
    final = _drive(
        code_server,
        "missing-server",
        workspace,
        ARTIFACTS / "broken-install",
        files={"error": "train_deepspeed.py"},
        expectNotification=[
            str(python),
            "dependencies are missing",
            "pygls",
            "pip install --force-reinstall fabric-lsp",
        ],
    )
    assert final["notifications"] == 1, final


def test_server_crash_at_start_shows_one_notification(code_server, tmp_path):
    """A server that dies while starting: one notification, its stderr in the output, no restart loop."""
    crash = tmp_path / "crashing-fabric-lsp"
    crash.write_text("#!/bin/sh\necho 'simulated crash at start' >&2\nexit 1\n")
    crash.chmod(0o755)
    workspace = _workspace(
        tmp_path / "project-crashing-server", {"train_deepspeed.py": DEEPSPEED}, {"fabric-lsp.path": str(crash)}
    )
    final = _drive(
        code_server,
        "missing-server",
        workspace,
        ARTIFACTS / "crashing-server",
        files={"error": "train_deepspeed.py"},
        expectNotification=["fabric-lsp"],
    )
    assert final["notifications"] == 1, final
    logs = _extension_logs(code_server)
    assert "simulated crash at start" in logs, logs
    assert logs.count("the server exited before it finished starting") == 1, logs


# --------------------------------------------------------------------------------------------
# The bundled server under every Python the extension may meet


def _python_version(python: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run(
            [python, "-c", "import sys; print('%d %d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    major, minor = out.stdout.split() if out.returncode == 0 else ("0", "0")
    return int(major), int(minor)


def _pythons() -> dict[str, str]:
    """{"3.X": interpreter} for each Python >= 3.9 found here: the one running the tests, those on
    PATH and pyenv's."""
    candidates = [sys.executable, *(shutil.which(f"python3.{minor}") for minor in range(9, 15))]
    candidates += sorted(str(p) for p in Path(os.path.expanduser("~/.pyenv/versions")).glob("3.*/bin/python3"))
    found: dict[str, str] = {}
    for candidate in filter(None, candidates):
        version = _python_version(candidate)
        if version and version >= (3, 9):
            found.setdefault(f"{version[0]}.{version[1]}", candidate)
    return dict(sorted(found.items(), key=lambda item: tuple(map(int, item[0].split(".")))))


PYTHONS = _pythons()


@pytest.fixture(scope="module")
def bundle(tools, tmp_path_factory) -> Path:
    """The extension folder of the .vsix, unpacked: bundled/tool and bundled/libs as installed."""
    import zipfile

    unpacked = tmp_path_factory.mktemp("vsix")
    with zipfile.ZipFile(_vsix(unpacked)) as archive:
        archive.extractall(unpacked)
    return unpacked / "extension"


@pytest.mark.asyncio
@pytest.mark.parametrize("version", list(PYTHONS))
async def test_bundled_server_runs_on_python(version, bundle, tmp_path):
    """`<venv python> -I bundled/tool/fabric_lsp_server.py`, as the extension starts it, with a fresh
    venv of each Python >= 3.9 found here (none has fabric-lsp; the bundle's dependencies are
    resolved for 3.9 and for every OS): it speaks LSP, analyses that venv (its own `tqdm`, named
    like a bundled module, is followed) and publishes FAB001."""
    from lsprotocol import types
    from pytest_lsp import client_capabilities, make_test_lsp_client

    python = _bare_venv(tmp_path / "venv", USER_PACKAGE, base=PYTHONS[version])
    workspace = _workspace(tmp_path / "project", {"train_helper.py": USES_USER_PACKAGE, "train.py": DEEPSPEED}, {})
    client = make_test_lsp_client()
    launcher = bundle / "bundled" / "tool" / "fabric_lsp_server.py"
    await client.start_io(str(python), "-I", str(launcher), cwd=str(workspace))
    try:
        result = await client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("visual_studio_code"),
                root_uri=workspace.as_uri(),
                initialization_options={"environmentPath": str(python), "debounceMs": 0},
            )
        )
        assert result.server_info is not None and result.server_info.name == "fabric-lsp"
        for name in ("train_helper.py", "train.py"):
            path = workspace / name
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    types.TextDocumentItem(uri=path.as_uri(), language_id="python", version=1, text=path.read_text())
                )
            )
        for name, text in (("train_helper.py", USES_USER_PACKAGE), ("train.py", DEEPSPEED)):
            uri = (workspace / name).as_uri()
            deadline = time.monotonic() + 60
            while not client.diagnostics.get(uri) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            line = _flagged_position(text)[0] - 1
            found = [(d.code, d.severity, d.range.start.line) for d in client.diagnostics.get(uri, [])]
            assert found == [("FAB001", types.DiagnosticSeverity.Error, line)], (name, found)
    finally:
        await client.shutdown_session()
        await client.stop()
