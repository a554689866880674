"""Documents whose paths have spaces and non-ASCII characters: clients send their URIs
percent-quoted (file:///tmp/my%20project/...), pygls keys open documents by the unquoted URI. The
server must find them (analysis, hover, code actions, unsaved text of an imported module) and
publish under the URI the client sent."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

TIMEOUT = 20
FOLDER = "my project ü 漢字"

HELPER_ON_DISK = """\
from lightning.fabric import Fabric


def make_fabric():
    return Fabric(strategy="ddp")
"""

# The open (unsaved) buffer of the helper: only the server's overlay of open documents sees it.
HELPER_UNSAVED = HELPER_ON_DISK.replace('"ddp"', '"deepspeed_stage_3"')

TRAIN = """\
import torch
from fabric_helpers import make_fabric

fabric = make_fabric()
fabric.launch()
model = torch.nn.Linear(4, 2)
model = fabric.setup_module(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / FOLDER
    root.mkdir()
    (root / "fabric_helpers.py").write_text(HELPER_ON_DISK, encoding="utf-8")
    (root / "train ü.py").write_text(TRAIN, encoding="utf-8")
    return root


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "fabric_lsp"]))
async def client(lsp_client: LanguageClient, project: Path):
    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params: types.RegistrationParams) -> None:
        return None  # accept dynamic registrations, as editors do

    params = types.InitializeParams(
        capabilities=client_capabilities("visual_studio_code"),
        root_uri=project.as_uri(),
        initialization_options={"debounceMs": 0},
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


def _open(client: LanguageClient, path: Path, text: str) -> str:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, text)))
    return uri


async def _diagnostics(client: LanguageClient, uri: str, count: int) -> list[types.Diagnostic]:
    async def poll():
        while uri not in client.diagnostics or len(client.diagnostics[uri]) != count:
            await asyncio.sleep(0.02)
        return list(client.diagnostics[uri])

    return await asyncio.wait_for(poll(), TIMEOUT)


@pytest.mark.asyncio
async def test_a_path_with_spaces_and_non_ascii_is_analysed(client: LanguageClient, project: Path):
    helper_uri = _open(client, project / "fabric_helpers.py", HELPER_UNSAVED)
    uri = _open(client, project / "train ü.py", TRAIN)
    assert "%20" in uri and "%C3%BC" in uri  # the client's URI is percent-quoted

    (diagnostic,) = await _diagnostics(client, uri, 1)
    assert (diagnostic.code, diagnostic.severity) == ("FAB001", types.DiagnosticSeverity.Error)
    assert diagnostic.range.start.line == TRAIN.splitlines().index("optimizer = fabric.setup_optimizers(optimizer)")
    assert all(key in (helper_uri, uri) for key in client.diagnostics)  # published under the sent URIs

    hover = await asyncio.wait_for(
        client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(diagnostic.range.start.line, 16))
        ),
        TIMEOUT,
    )
    assert hover is not None and "DeepSpeed" in hover.contents.value

    actions = await asyncio.wait_for(
        client.text_document_code_action_async(
            types.CodeActionParams(
                types.TextDocumentIdentifier(uri), diagnostic.range, types.CodeActionContext([diagnostic])
            )
        ),
        TIMEOUT,
    )
    assert any(a.title.startswith("Set up model and optimizer jointly") for a in actions), [a.title for a in actions]


@pytest.mark.asyncio
async def test_the_open_text_of_an_imported_module_is_read_under_a_quoted_uri(client: LanguageClient, project: Path):
    """With the helper as saved on disk (DDP) there is nothing to report: the unsaved DeepSpeed
    buffer is what made the finding above, so the overlay was found by its quoted URI."""
    uri = _open(client, project / "train ü.py", TRAIN)
    assert await _diagnostics(client, uri, 0) == []
    _open(client, project / "fabric_helpers.py", HELPER_UNSAVED)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            [types.TextDocumentContentChangeWholeDocument(text=TRAIN)],
        )
    )
    (diagnostic,) = await _diagnostics(client, uri, 1)
    assert diagnostic.code == "FAB001"
