"""The server against the real process: the settings decide which rules run (hover and code
actions included), what the verdicts assume (the Lightning version) and their severity — the same
severity ``fabric-lsp check`` gives — and the latest editor settings replace the first ones."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_lsp
from ci_env import in_ci
from fabric_lsp.facts import installed_lightning_version
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

TIMEOUT = 20

DEEPSPEED = """\
import torch
from lightning.fabric import Fabric

fabric = Fabric(strategy="deepspeed_stage_3")
fabric.launch()
model = torch.nn.Linear(4, 4)
model = fabric.setup_module(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)
"""
SETUP_OPTIMIZERS = types.Position(line=8, character=20)  # on `setup_optimizers`
#: what FAB001's verdict says in hover there
FAB001_VERDICT = "`setup_optimizers` raises"

#: an error (FAB001), FAB005's warnings: `no_backward_sync` is a no-op under DeepSpeed (Lightning
#: only warns), `clip_gradients` where the code can choose DeepSpeed; and FAB007
MIXED = """\
import sys

import torch
from lightning.fabric import Fabric

fabric = Fabric(strategy="deepspeed")
fabric.launch()
model = torch.nn.Linear(4, 4)
model = fabric.setup_module(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)
with fabric.no_backward_sync(model, enabled=True):
    fabric.backward(model(torch.ones(4)).sum())

maybe = Fabric(strategy="deepspeed" if "--ds" in sys.argv else "ddp")
net, opt = maybe.setup(torch.nn.Linear(4, 4), optimizer)
maybe.clip_gradients(net, opt, max_norm=1.0)
"""

#: FAB004 since Lightning 2.3: `loss.backward()` on a bf16-mixed model (in a function, where a
#: verdict is reused from one analysis to the next)
BACKWARD = """\
from lightning.fabric import Fabric


def train(model, optimizer, criterion, x, y):
    fabric = Fabric(precision="bf16-mixed")
    fabric.launch()
    model, optimizer = fabric.setup(model, optimizer)
    loss = criterion(model(x), y)
    loss.backward()
"""


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "fabric_lsp"]))
async def client(lsp_client: LanguageClient):
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)


def write(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return root


async def start(client: LanguageClient, root: Path, options: dict | None = None, pull_settings: bool = True) -> None:
    caps = client_capabilities("neovim@v0.11.0")
    if not pull_settings and caps.workspace is not None:
        caps.workspace.configuration = False
    params = types.InitializeParams(
        capabilities=caps,
        root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(root.as_uri(), root.name)],
        initialization_options={"debounceMs": 0, **(options or {})},
    )
    await asyncio.wait_for(client.initialize_session(params), TIMEOUT)


def open_file(client: LanguageClient, path: Path) -> str:
    uri = path.as_uri()
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, path.read_text()))
    )
    return uri


async def diagnostics(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    async def poll():
        while uri not in client.diagnostics:
            await asyncio.sleep(0.02)
        return list(client.diagnostics[uri])

    return await asyncio.wait_for(poll(), TIMEOUT)


async def republished(client: LanguageClient, uri: str, trigger) -> list[types.Diagnostic]:
    client.diagnostics.pop(uri, None)
    trigger()
    return await diagnostics(client, uri)


def change_settings(client: LanguageClient, settings: dict | None) -> None:
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=settings))


async def hover_text(client: LanguageClient, uri: str, position: types.Position) -> str:
    params = types.HoverParams(types.TextDocumentIdentifier(uri), position)
    hover = await asyncio.wait_for(client.text_document_hover_async(params), TIMEOUT)
    return hover.contents.value if hover is not None and isinstance(hover.contents, types.MarkupContent) else ""


async def code_action_titles(client: LanguageClient, uri: str, position: types.Position) -> list[str]:
    rng = types.Range(position, position)
    params = types.CodeActionParams(types.TextDocumentIdentifier(uri), rng, types.CodeActionContext([]))
    actions = await asyncio.wait_for(client.text_document_code_action_async(params), TIMEOUT)
    return [a.title for a in actions or []]


@pytest.mark.asyncio
@pytest.mark.parametrize("where", ["pyproject", "editor", "per-file-ignores"])
async def test_an_ignored_rule_shows_in_neither_hover_nor_code_actions(client: LanguageClient, tmp_path, where):
    tables = {
        "pyproject": '[tool.fabric-lsp]\nignore = ["FAB001"]\n',
        "per-file-ignores": '[tool.fabric-lsp]\nper-file-ignores = { "train.py" = ["FAB001"] }\n',
        "editor": "",
    }
    project = write(tmp_path / "proj", {"train.py": DEEPSPEED, "other.py": DEEPSPEED, "pyproject.toml": tables[where]})
    await start(client, project, {"ignore": ["FAB001"]} if where == "editor" else {})
    uri = open_file(client, project / "train.py")
    assert await diagnostics(client, uri) == []
    hover = await hover_text(client, uri, SETUP_OPTIMIZERS)
    assert FAB001_VERDICT not in hover, hover
    assert not any("FAB001" in t or "jointly" in t for t in await code_action_titles(client, uri, SETUP_OPTIMIZERS))
    if where == "per-file-ignores":  # another file of the project still has FAB001, in hover too
        other = open_file(client, project / "other.py")
        assert [d.code for d in await diagnostics(client, other)] == ["FAB001"]
        assert FAB001_VERDICT in await hover_text(client, other, SETUP_OPTIMIZERS)


def check_json(cwd: Path, *paths: str) -> list[dict]:
    env = dict(os.environ, NO_COLOR="1")
    env.pop("FABRIC_LSP_DEBUG", None)
    cmd = [sys.executable, "-m", "fabric_lsp", "check", "--format", "json", *paths]
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


LSP_SEVERITY = {
    types.DiagnosticSeverity.Error: "error",
    types.DiagnosticSeverity.Warning: "warning",
    types.DiagnosticSeverity.Information: "information",
    types.DiagnosticSeverity.Hint: "hint",
}


@pytest.mark.asyncio
@pytest.mark.parametrize("table", ["", '[tool.fabric-lsp]\nseverity = { FAB007 = "information" }\n'])
async def test_the_editor_shows_the_severity_of_the_command_line(client: LanguageClient, tmp_path, table):
    project = write(tmp_path / "proj", {"train.py": MIXED, "pyproject.toml": table})
    cli = sorted((f["code"], f["location"]["row"] - 1, f["severity"]) for f in check_json(project, "train.py"))
    assert ("FAB005", 11, "warning") in cli  # no_backward_sync under DeepSpeed: Lightning only warns
    await start(client, project)
    diags = await diagnostics(client, open_file(client, project / "train.py"))
    editor = sorted((d.code, d.range.start.line, LSP_SEVERITY[d.severity]) for d in diags)
    assert editor == cli


@pytest.mark.asyncio
async def test_a_changed_lightning_version_gives_a_fresh_verdict(client: LanguageClient, tmp_path):
    project = write(
        tmp_path / "proj", {"train.py": BACKWARD, "pyproject.toml": '[tool.fabric-lsp]\nlightning-version = "2.6.6"\n'}
    )
    await start(client, project)
    uri = open_file(client, project / "train.py")
    assert [d.code for d in await diagnostics(client, uri)] == ["FAB004"]
    (project / "pyproject.toml").write_text('[tool.fabric-lsp]\nlightning-version = "2.2"\n')
    save = types.DidSaveTextDocumentParams(types.TextDocumentIdentifier((project / "pyproject.toml").as_uri()))
    assert await republished(client, uri, lambda: client.text_document_did_save(save)) == []  # FAB004 needs 2.3
    change = {"fabric-lsp": {"lightningVersion": "2.6.6"}}  # the editor's setting replaces the file's
    assert [d.code for d in await republished(client, uri, lambda: change_settings(client, change))] == ["FAB004"]


#: PL004 on Lightning 2: a ``*_epoch_end`` hook of a module that is fitted
EPOCH_END = """\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def training_epoch_end(self, outputs):
        pass


pl.Trainer().fit(Model())
"""


def _needs_no_installed_lightning() -> None:
    """The installed Lightning comes before the declared one: these tests need none beside the
    server. Under CI that is a failure, never a skip (the test venv has none)."""
    if installed_lightning_version() is not None:
        message = "a Lightning is installed beside the server: the declared version is not read"
        if in_ci():
            pytest.fail("CI=true and " + message, pytrace=False)
        pytest.skip(message)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("requirements", "codes"), [("pytorch-lightning==1.9.0\n", []), ("pytorch-lightning>=2\n", ["PL004"])]
)
async def test_the_workspace_declares_its_lightning_version(client: LanguageClient, tmp_path, requirements, codes):
    """No Lightning installed beside the server: the workspace's requirements.txt gives the version."""
    _needs_no_installed_lightning()
    project = write(tmp_path / "proj", {"train.py": EPOCH_END, "requirements.txt": requirements})
    await start(client, project)
    assert [d.code for d in await diagnostics(client, open_file(client, project / "train.py"))] == codes


@pytest.mark.asyncio
async def test_a_saved_requirements_file_gives_a_fresh_verdict(client: LanguageClient, tmp_path):
    _needs_no_installed_lightning()
    project = write(tmp_path / "proj", {"train.py": EPOCH_END, "requirements.txt": "pytorch-lightning>=2\n"})
    await start(client, project)
    uri = open_file(client, project / "train.py")
    assert [d.code for d in await diagnostics(client, uri)] == ["PL004"]
    (project / "requirements.txt").write_text("pytorch-lightning==1.9.0\n")
    save = types.DidSaveTextDocumentParams(types.TextDocumentIdentifier((project / "requirements.txt").as_uri()))
    assert await republished(client, uri, lambda: client.text_document_did_save(save)) == []


@pytest.mark.asyncio
@pytest.mark.parametrize("latest", [{"ignore": None}, {}, {"severity": {"FAB001": "warning"}}])
async def test_the_latest_settings_replace_the_initialization_options(client: LanguageClient, tmp_path, latest):
    project = write(tmp_path / "proj", {"train.py": DEEPSPEED})
    await start(client, project, {"ignore": ["FAB001"]})
    uri = open_file(client, project / "train.py")
    assert await diagnostics(client, uri) == []
    # `ignore` null or left out of the latest settings: back to its default (nothing ignored)
    diags = await republished(client, uri, lambda: change_settings(client, {"fabric-lsp": latest}))
    expected = types.DiagnosticSeverity.Warning if "severity" in latest else types.DiagnosticSeverity.Error
    assert [(d.code, d.severity) for d in diags] == [("FAB001", expected)]


@pytest.mark.asyncio
async def test_a_notification_without_settings_from_a_client_that_cannot_be_asked_changes_nothing(
    client: LanguageClient, tmp_path
):
    project = write(tmp_path / "proj", {"train.py": DEEPSPEED})
    await start(client, project, {"severity": {"FAB001": "information"}}, pull_settings=False)
    uri = open_file(client, project / "train.py")
    assert [d.severity for d in await diagnostics(client, uri)] == [types.DiagnosticSeverity.Information]
    diags = await republished(client, uri, lambda: change_settings(client, None))
    assert [d.severity for d in diags] == [types.DiagnosticSeverity.Information]
