"""End-to-end tests against the real server process, with pytest-lsp as the client."""

from __future__ import annotations

import ast
import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from fabric_lsp.engine.python.text import Lines
from fabric_lsp.lsp.positions import Encoder
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
TIMEOUT = 20


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "fabric_lsp"]),
    params=["visual_studio_code", "neovim@v0.11.0", "emacs"],
)
async def client(lsp_client: LanguageClient, request):
    if types.CLIENT_REGISTER_CAPABILITY not in lsp_client.protocol.fm.features:

        @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def register_capability(params: types.RegistrationParams) -> None:
            return None  # accept dynamic registrations, as editors do

    params = types.InitializeParams(
        capabilities=client_capabilities(request.param),
        root_uri=EXAMPLES.as_uri(),
        initialization_options={"debounceMs": 0},
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


async def wait_for_diagnostics(client: LanguageClient, uri: str, version=None, timeout: float = TIMEOUT):
    async def poll():
        while True:
            got = client.diagnostics.get(uri)
            if got is not None and (version is None or client.diagnostic_versions.get(uri) == version):
                return list(got)
            await asyncio.sleep(0.02)

    return await asyncio.wait_for(poll(), timeout)


def _track_versions(client: LanguageClient) -> None:
    if hasattr(client, "diagnostic_versions"):
        return
    client.diagnostic_versions = {}
    features = client.protocol.fm.features
    default = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def on_diagnostics(params: types.PublishDiagnosticsParams):
        client.diagnostic_versions[params.uri] = params.version
        return default(params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = on_diagnostics


def open_doc(client: LanguageClient, path: Path, text: str | None = None, version: int = 1) -> str:
    _track_versions(client)
    uri = path.as_uri()
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(
                uri=uri, language_id="python", version=version, text=text if text is not None else path.read_text()
            )
        )
    )
    return uri


def encoder_for(client: LanguageClient) -> Encoder:
    caps = client.capabilities.general
    enc = caps.position_encodings[0] if caps and caps.position_encodings else "utf-16"
    return Encoder(enc)


def apply_text_edits(text: str, edits: list[types.TextEdit], enc: Encoder) -> str:
    lines = Lines(text)
    spans = sorted(
        ((enc.range_from_lsp(lines, e.range), e.new_text) for e in edits), key=lambda x: x[0].start, reverse=True
    )
    for span, new in spans:
        s, e = lines.offset(span.start), lines.offset(span.end)
        text = text[:s] + new + text[e:]
    return text


def edits_of(edit: types.WorkspaceEdit, uri: str) -> list[types.TextEdit]:
    if edit.document_changes:
        assert all(dc.text_document.uri == uri for dc in edit.document_changes)
        return [e for dc in edit.document_changes for e in dc.edits]
    assert list(edit.changes) == [uri]
    return edit.changes[uri]


async def quick_fix(client: LanguageClient, uri: str, diag: types.Diagnostic) -> types.CodeAction:
    actions = await asyncio.wait_for(
        client.text_document_code_action_async(
            types.CodeActionParams(types.TextDocumentIdentifier(uri), diag.range, types.CodeActionContext([diag]))
        ),
        TIMEOUT,
    )
    fixes = [a for a in actions if a.title.startswith("Set up model and optimizer jointly")]
    assert len(fixes) == 1, [a.title for a in actions]
    action = fixes[0]
    assert action.kind == types.CodeActionKind.QuickFix
    if action.edit is None:
        action = await asyncio.wait_for(client.code_action_resolve_async(action), TIMEOUT)
    assert action.edit is not None
    return action


@pytest.mark.asyncio
async def test_error_diagnostic_and_quick_fix(client: LanguageClient):
    path = EXAMPLES / "train_deepspeed.py"
    text = path.read_text()
    uri = open_doc(client, path)
    diags = await wait_for_diagnostics(client, uri)
    assert len(diags) == 1
    d = diags[0]
    assert (d.code, d.source, d.severity) == ("FAB001", "fabric-lsp", types.DiagnosticSeverity.Error)
    line = text.splitlines()[d.range.start.line]
    assert line[d.range.start.character : d.range.end.character] == "fabric.setup_optimizers(optimizer)"
    assert d.code_description and d.code_description.href.endswith("FAB001.md")
    messages = [r.message for r in d.related_information]
    assert any("Strategy chosen here" in m for m in messages)
    assert any("Model set up separately" in m for m in messages)

    action = await quick_fix(client, uri, d)
    assert action.is_preferred
    fixed = apply_text_edits(text, edits_of(action.edit, uri), encoder_for(client))
    ast.parse(fixed)
    assert "model, optimizer = fabric.setup(model, optimizer)" in fixed
    assert "setup_optimizers" not in fixed and "setup_module" not in fixed

    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            [types.TextDocumentContentChangeWholeDocument(text=fixed)],
        )
    )
    assert [d for d in await wait_for_diagnostics(client, uri, version=2) if d.code == "FAB001"] == []

    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
    await asyncio.wait_for(
        _until(lambda: list(client.diagnostics.get(uri, [None])) == [] and client.diagnostic_versions.get(uri) is None),
        TIMEOUT,
    )


async def _until(cond):
    while not cond():
        await asyncio.sleep(0.02)


@pytest.mark.asyncio
async def test_warning_and_clean_files(client: LanguageClient):
    uri = open_doc(client, EXAMPLES / "train_tpu_flag.py")
    diags = await wait_for_diagnostics(client, uri)
    assert [d.severity for d in diags] == [types.DiagnosticSeverity.Warning]
    clean = open_doc(client, EXAMPLES / "train_fsdp.py")
    assert await wait_for_diagnostics(client, clean) == []


NON_ASCII = """# Grüße 🚀 漢字 — a comment before the call
import torch
from lightning.fabric import Fabric

fabric = Fabric(strategy="deepspeed")  # 🚀🚀
fabric.launch()
model = fabric.setup_module(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
label = "ü🚀"; optimizer = fabric.setup_optimizers(optimizer)  # 漢字 ü
"""


@pytest.mark.asyncio
async def test_positions_in_negotiated_encoding(client: LanguageClient, tmp_path):
    path = tmp_path / "unicode_train.py"
    uri = open_doc(client, path, NON_ASCII)
    diags = await wait_for_diagnostics(client, uri)
    assert len(diags) == 1
    enc = encoder_for(client)
    lines = Lines(NON_ASCII)
    span = enc.range_from_lsp(lines, diags[0].range)
    line = lines.content(span.start.line)
    assert line[span.start.col : span.end.col] == "fabric.setup_optimizers(optimizer)"
    # the statement shares its line with another: no automatic edit, the message says why
    assert "No automatic fix" in diags[0].message


@pytest.mark.asyncio
async def test_stale_resolve_gives_no_edit(client: LanguageClient):
    path = EXAMPLES / "train_deepspeed.py"
    text = path.read_text()
    uri = open_doc(client, path)
    diags = await wait_for_diagnostics(client, uri)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(types.TextDocumentIdentifier(uri), diags[0].range, types.CodeActionContext(diags))
    )
    action = next(a for a in actions if a.title.startswith("Set up"))
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            [types.TextDocumentContentChangeWholeDocument(text="# edited\n" + text)],
        )
    )
    await wait_for_diagnostics(client, uri, version=2)
    if action.edit is None:  # lazy client: resolving the old action must not produce an edit
        resolved = await asyncio.wait_for(client.code_action_resolve_async(action), TIMEOUT)
        assert resolved.edit is None
    else:  # eager client: the edit names the version it was made for
        if action.edit.document_changes:
            assert action.edit.document_changes[0].text_document.version == 1


@pytest.mark.asyncio
async def test_half_typed_file_never_crashes(client: LanguageClient, tmp_path):
    path = tmp_path / "typing.py"
    text = 'from lightning.fabric import Fabric\nfabric = Fabric(strategy="xla")\n'
    uri = open_doc(client, path, text)
    await wait_for_diagnostics(client, uri)
    typed = "opt = fabric.setup_optimizers(opt"
    version = 1
    for i in range(1, len(typed) + 1):
        version += 1
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                [types.TextDocumentContentChangeWholeDocument(text + typed[:i])],
            )
        )
    version += 1
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            [types.TextDocumentContentChangeWholeDocument(text=text + typed + ")\n")],
        )
    )
    diags = await wait_for_diagnostics(client, uri, version=version)
    # FAB001 (FAB007 also reports the missing launch(fn) that XLA needs)
    assert [d.severity for d in diags if d.code == "FAB001"] == [types.DiagnosticSeverity.Error]


@pytest.mark.asyncio
async def test_hover_explains_the_strategy(client: LanguageClient):
    path = EXAMPLES / "train_tpu_flag.py"
    text = path.read_text()
    uri = open_doc(client, path)
    await wait_for_diagnostics(client, uri)
    line = next(i for i, s in enumerate(text.splitlines()) if "fabric.setup_optimizers" in s)
    col = text.splitlines()[line].index("fabric.setup_optimizers") + 2
    hover = await asyncio.wait_for(
        client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line=line, character=col))
        ),
        TIMEOUT,
    )
    assert hover is not None
    value = hover.contents.value
    assert "possibly DeepSpeed/XLA" in value and "XLAStrategy" in value and "DDPStrategy" in value
    assert "fabric.launch(train, 1e-3)" in value


@pytest.mark.asyncio
async def test_disable_for_this_line_merges_with_existing_noqa(client: LanguageClient, tmp_path):
    text = (
        "from lightning.fabric import Fabric\n"
        'fabric = Fabric(strategy="xla")\n'
        "model = fabric.setup_module(model)\n"
        "optimizer = fabric.setup_optimizers(optimizer)  # noqa: E501\n"
    )
    uri = open_doc(client, tmp_path / "noqa.py", text)
    diags = [d for d in await wait_for_diagnostics(client, uri) if d.code == "FAB001"]  # FAB007: no launch
    actions = await asyncio.wait_for(
        client.text_document_code_action_async(
            types.CodeActionParams(types.TextDocumentIdentifier(uri), diags[0].range, types.CodeActionContext(diags))
        ),
        TIMEOUT,
    )
    action = next(a for a in actions if a.title == "Disable FAB001 for this line")
    if action.edit is None:
        action = await asyncio.wait_for(client.code_action_resolve_async(action), TIMEOUT)
    silenced = apply_text_edits(text, edits_of(action.edit, uri), encoder_for(client))
    assert silenced.splitlines()[3] == "optimizer = fabric.setup_optimizers(optimizer)  # noqa: E501, FAB001"
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            [types.TextDocumentContentChangeWholeDocument(text=silenced)],
        )
    )
    assert [d for d in await wait_for_diagnostics(client, uri, version=2) if d.code == "FAB001"] == []


@pytest.mark.asyncio
async def test_fix_all_source_action(client: LanguageClient):
    path = EXAMPLES / "train_deepspeed.py"
    text = path.read_text()
    uri = open_doc(client, path)
    await wait_for_diagnostics(client, uri)
    actions = await asyncio.wait_for(
        client.text_document_code_action_async(
            types.CodeActionParams(
                types.TextDocumentIdentifier(uri),
                types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
                types.CodeActionContext([], only=["source.fixAll.fabric-lsp"]),
            )
        ),
        TIMEOUT,
    )
    assert [a.kind for a in actions] == ["source.fixAll.fabric-lsp"]
    fixed = apply_text_edits(text, edits_of(actions[0].edit, uri), encoder_for(client))
    assert "model, optimizer = fabric.setup(model, optimizer)" in fixed
