"""The configuration model made visible, against the real server process (pytest-lsp): hover on a
``Fabric(...)`` or a name bound to one lists its configurations with where each value was written;
an inlay hint after ``Fabric(...)`` shows the one configuration, or how many there are; the
``inlayHints`` setting turns the hints off."""

from __future__ import annotations

import asyncio
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

TIMEOUT = 20

ONE = 'from lightning.fabric import Fabric\nfabric = Fabric(accelerator="cpu", devices=1)\nfabric.launch()\n'
TWO = (
    "from lightning.fabric import Fabric\n"
    "\n"
    "def make(sharded):\n"
    '    strategy = "fsdp" if sharded else "ddp"\n'
    '    return Fabric(accelerator="cuda", devices=2, strategy=strategy)\n'
    "\n"
    'fabric = make(input() == "y")\n'  # a choice made at run time: both configurations
    "fabric.launch()\n"
)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "fabric_lsp"]))
async def client(lsp_client: LanguageClient):
    if types.CLIENT_REGISTER_CAPABILITY not in lsp_client.protocol.fm.features:

        @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def register_capability(params: types.RegistrationParams) -> None:
            return None  # accept dynamic registrations, as editors do

    lsp_client.inlay_refreshes = 0

    @lsp_client.feature(types.WORKSPACE_INLAY_HINT_REFRESH)
    def inlay_hint_refresh(params: None) -> None:
        lsp_client.inlay_refreshes += 1

    caps = client_capabilities("visual_studio_code")
    assert caps.workspace is not None
    caps.workspace.inlay_hint = types.InlayHintWorkspaceClientCapabilities(refresh_support=True)
    params = types.InitializeParams(capabilities=caps, initialization_options={"debounceMs": 0})
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


def _open(client: LanguageClient, path, text: str) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))
    )
    return uri


async def _hover(client: LanguageClient, uri: str, line: int, character: int) -> str:
    hover = await asyncio.wait_for(
        client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line=line, character=character))
        ),
        TIMEOUT,
    )
    assert hover is not None
    assert isinstance(hover.contents, types.MarkupContent)
    return hover.contents.value


async def _hints(client: LanguageClient, uri: str, text: str) -> list[types.InlayHint]:
    lines = text.splitlines()
    whole = types.Range(types.Position(0, 0), types.Position(len(lines), 0))
    got = await asyncio.wait_for(
        client.text_document_inlay_hint_async(types.InlayHintParams(types.TextDocumentIdentifier(uri), whole)), TIMEOUT
    )
    return list(got or [])


@pytest.mark.asyncio
async def test_hover_on_a_fabric_with_one_configuration(client: LanguageClient, tmp_path):
    uri = _open(client, tmp_path / "train.py", ONE)
    value = await _hover(client, uri, 1, len("fabric = Fab"))  # the class name in `Fabric(...)`
    assert "1 configuration" in value
    assert "SingleDeviceStrategy · CPU · 1 process · 32-true" in value
    assert 'accelerator: `CPUAccelerator` on CPU — accelerator="cpu" (train.py:2)' in value
    assert "devices: `cpu` — 1 process — devices=1 (train.py:2)" in value
    assert "precision: `32-true` (`Precision`) — default" in value
    # the same on the name bound to it, where it is used
    assert "1 configuration" in await _hover(client, uri, 2, 2)


@pytest.mark.asyncio
async def test_hover_on_a_name_lists_both_strategies_of_a_condition(client: LanguageClient, tmp_path):
    uri = _open(client, tmp_path / "train.py", TWO)
    value = await _hover(client, uri, 7, 2)  # `fabric` in `fabric.launch()`
    assert "`Fabric` (train.py:5): 2 configurations" in value
    assert "FSDPStrategy · CUDA ×2 · 2 processes · 32-true · subprocess script" in value
    assert "DDPStrategy · CUDA ×2 · 2 processes · 32-true · subprocess script" in value
    # each value with the line it was written on: the strategy on line 4, the devices on line 5
    assert 'strategy: `FSDPStrategy` — strategy="fsdp" (train.py:4)' in value
    assert 'strategy: `DDPStrategy` — strategy="ddp" (train.py:4)' in value
    assert "devices: `cuda:0`, `cuda:1` — 2 processes — devices=2 (train.py:5)" in value
    assert "launcher: subprocess script" in value


@pytest.mark.asyncio
async def test_inlay_hints_show_the_configuration_or_the_count(client: LanguageClient, tmp_path):
    text = ONE + TWO.replace("from lightning.fabric import Fabric\n", "")
    uri = _open(client, tmp_path / "train.py", text)
    hints = await _hints(client, uri, text)
    lines = text.splitlines()
    got = [(h.position.line, h.position.character, h.label) for h in hints]
    assert got == [
        (1, len(lines[1]), "SingleDeviceStrategy · CPU · 1 process · 32-true"),
        (6, len(lines[6]), "2 configurations"),
    ]
    assert all(h.padding_left for h in hints)
    tooltip = hints[1].tooltip
    assert isinstance(tooltip, types.MarkupContent) and "FSDPStrategy" in tooltip.value


@pytest.mark.asyncio
async def test_the_inlay_hints_setting_turns_them_off(client: LanguageClient, tmp_path):
    uri = _open(client, tmp_path / "train.py", ONE)
    assert len(await _hints(client, uri, ONE)) == 1
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"fabric-lsp": {"inlayHints": False}})
    )
    assert await _hints(client, uri, ONE) == []
    assert client.inlay_refreshes == 1  # the client is asked to ask again
    # a key the editor stops sending is back to its default
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"fabric-lsp": {}}))
    assert len(await _hints(client, uri, ONE)) == 1


@pytest.mark.asyncio
async def test_inlay_hints_asked_right_after_an_edit_describe_the_new_version(client: LanguageClient, tmp_path):
    uri = _open(client, tmp_path / "train.py", ONE)
    assert [h.label for h in await _hints(client, uri, ONE)] == ["SingleDeviceStrategy · CPU · 1 process · 32-true"]
    edited = ONE.replace("devices=1", 'devices=2, strategy="ddp"')
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            [types.TextDocumentContentChangeWholeDocument(text=edited)],
        )
    )
    got = await _hints(client, uri, edited)  # no wait: the server answers once this version is analysed
    assert [h.label for h in got] == ["DDPStrategy · CPU ×2 · 2 processes · 32-true · subprocess script"]


TRAINER = (
    "import argparse\n"
    "import lightning as L\n"
    "parser = argparse.ArgumentParser()\n"
    'parser.add_argument("--fsdp", action="store_true")\n'
    "args = parser.parse_args()\n"
    'trainer = L.Trainer(accelerator="cpu", devices=2, strategy="fsdp" if args.fsdp else "ddp")\n'
    'single = L.Trainer(accelerator="cpu", devices=1)\n'
    "trainer.fit(model)\n"
)


@pytest.mark.asyncio
async def test_a_trainer_shows_its_configurations_as_a_fabric_does(client: LanguageClient, tmp_path):
    uri = _open(client, tmp_path / "train.py", TRAINER)
    hints = await _hints(client, uri, TRAINER)
    lines = TRAINER.splitlines()
    assert [(h.position.line, h.position.character, h.label) for h in hints] == [
        (5, len(lines[5]), "2 configurations"),
        (6, len(lines[6]), "SingleDeviceStrategy · CPU · 1 process · 32-true"),
    ]
    value = await _hover(client, uri, 7, 2)  # `trainer` in `trainer.fit(model)`
    assert "`Trainer` (train.py:6): 2 configurations" in value
    assert 'strategy: `DDPStrategy` — strategy="ddp" (train.py:6)' in value
    assert "`Trainer(...)` raises `ValueError`: The strategy `fsdp` requires a GPU accelerator" in value
