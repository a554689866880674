"""The server with LSP's notebook protocol, against the real server process (pytest-lsp client):
diagnostics per cell computed over the whole notebook, quick fix, fix-all, noqa and hover in cells."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from fabric_lsp.engine.python.text import Lines
from fabric_lsp.lsp.positions import Encoder
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

TIMEOUT = 30

CREATE = (
    "import torch\nfrom lightning.fabric import Fabric\n\n"
    'fabric = Fabric(accelerator="cuda", devices=8, strategy="deepspeed_stage_3")'
)
MARKDOWN = "# Training\nThe model is set up below."
MODEL = "%matplotlib inline\nmodel = torch.nn.Linear(32, 2)\nmodel = fabric.setup_module(model)"
OPTIM = (
    "!nvidia-smi\noptimizer = torch.optim.AdamW(model.parameters())\noptimizer = fabric.setup_optimizers(optimizer)\n"
)
SAME_CELL = (
    "model = torch.nn.Linear(32, 2)\nmodel = fabric.setup_module(model)\n"
    "optimizer = torch.optim.AdamW(model.parameters())\noptimizer = fabric.setup_optimizers(optimizer)"
)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "fabric_lsp"]))
async def client(lsp_client: LanguageClient, tmp_path_factory):
    if types.CLIENT_REGISTER_CAPABILITY not in lsp_client.protocol.fm.features:

        @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def register_capability(params: types.RegistrationParams) -> None:
            return None  # accept dynamic registrations, as editors do

    caps = client_capabilities("visual_studio_code")
    # VS Code's language client announces notebook document sync; pytest-lsp's recorded
    # capabilities predate it.
    caps.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities(execution_summary_support=True)
    )
    # These notebooks create DeepSpeed Fabrics at the top level: Lightning refuses them in a
    # notebook (FAB011, tested in test_fab011.py); the notebook protocol is exercised with FAB001.
    root = tmp_path_factory.mktemp("nbroot")
    lsp_client.root = root
    lsp_client.init_result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=caps, root_uri=root.as_uri(), initialization_options={"debounceMs": 0, "select": ["FAB001"]}
        )
    )
    yield
    await lsp_client.shutdown_session()


def _open(client: LanguageClient, name: str, cells: list[tuple[str, str]]) -> tuple[str, list[str]]:
    """Open a notebook of (kind, text) cells; returns its URI and its cells' URIs."""
    nb_uri = (Path(client.root) / name).as_uri()
    uris = [f"vscode-notebook-cell:{Path(client.root) / name}#W{i}sZmlsZQ%3D%3D" for i in range(len(cells))]
    kinds = {"code": types.NotebookCellKind.Code, "markdown": types.NotebookCellKind.Markup}
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=nb_uri,
                notebook_type="jupyter-notebook",
                version=1,
                cells=[types.NotebookCell(kind=kinds[k], document=u) for (k, _), u in zip(cells, uris)],
            ),
            cell_text_documents=[
                types.TextDocumentItem(uri=u, language_id="python" if k == "code" else "markdown", version=1, text=t)
                for (k, t), u in zip(cells, uris)
            ],
        )
    )
    return nb_uri, uris


async def _until(cond, timeout: float = TIMEOUT):
    async def poll():
        while not cond():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), timeout)


def _encoder(client: LanguageClient) -> Encoder:
    caps = client.capabilities.general
    return Encoder(caps.position_encodings[0] if caps and caps.position_encodings else "utf-16")


def _apply(text: str, edits: list[types.TextEdit], enc: Encoder) -> str:
    lines = Lines(text)
    for span, new in sorted(
        ((enc.range_from_lsp(lines, e.range), e.new_text) for e in edits), key=lambda x: x[0].start, reverse=True
    ):
        text = text[: lines.offset(span.start)] + new + text[lines.offset(span.end) :]
    return text


def _edits(edit: types.WorkspaceEdit) -> dict[str, list[types.TextEdit]]:
    if edit.document_changes:
        return {dc.text_document.uri: list(dc.edits) for dc in edit.document_changes}
    return dict(edit.changes or {})


async def _actions(client: LanguageClient, uri: str, diag: types.Diagnostic, only=None) -> list[types.CodeAction]:
    actions = await asyncio.wait_for(
        client.text_document_code_action_async(
            types.CodeActionParams(
                types.TextDocumentIdentifier(uri), diag.range, types.CodeActionContext([diag], only=only)
            )
        ),
        TIMEOUT,
    )
    resolved = []
    for a in actions or []:
        if a.edit is None and a.data is not None:
            a = await asyncio.wait_for(client.code_action_resolve_async(a), TIMEOUT)
        resolved.append(a)
    return resolved


@pytest.mark.asyncio
async def test_diagnostics_per_cell_over_the_whole_notebook(client: LanguageClient):
    cells = [("code", CREATE), ("markdown", MARKDOWN), ("code", MODEL), ("code", OPTIM)]
    nb_uri, uris = _open(client, "train.ipynb", cells)
    await _until(lambda: all(u in client.diagnostics for u in (uris[0], uris[2], uris[3])))
    assert list(client.diagnostics[uris[0]]) == [] and list(client.diagnostics[uris[2]]) == []
    assert list(client.diagnostics.get(uris[1], [])) == []
    (d,) = client.diagnostics[uris[3]]
    assert d.code == "FAB001" and d.severity == types.DiagnosticSeverity.Error
    assert d.range == types.Range(start=types.Position(2, 12), end=types.Position(2, 46))
    related = {r.message.split(":")[0]: r.location for r in d.related_information}
    strategy = related["Strategy chosen here"]
    assert strategy.uri == uris[0]
    assert CREATE.splitlines()[strategy.range.start.line][strategy.range.start.character :].startswith(
        '"deepspeed_stage_3"'
    )
    model = related["Model set up separately here"]
    assert model.uri == uris[2] and model.range.start.line == 2

    # The fix would edit cells 3 and 4: refused; "disable for this line" edits the cell.
    actions = await _actions(client, uris[3], d)
    assert [a.title for a in actions] == ["Disable FAB001 for this line"]
    assert list(_edits(actions[0].edit)) == [uris[3]]
    silenced = _apply(OPTIM, _edits(actions[0].edit)[uris[3]], _encoder(client))
    assert silenced.splitlines()[2] == "optimizer = fabric.setup_optimizers(optimizer)  # noqa: FAB001"

    # A change in cell 1 changes the diagnostics of cell 4.
    client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(version=2, uri=nb_uri),
            change=types.NotebookDocumentChangeEvent(
                cells=types.NotebookDocumentCellChanges(
                    text_content=[
                        types.NotebookDocumentCellContentChanges(
                            document=types.VersionedTextDocumentIdentifier(uri=uris[0], version=2),
                            changes=[
                                types.TextDocumentContentChangeWholeDocument(
                                    text=CREATE.replace("deepspeed_stage_3", "ddp")
                                )
                            ],
                        )
                    ]
                )
            ),
        )
    )
    await _until(lambda: list(client.diagnostics.get(uris[3], [None])) == [])

    # Back to DeepSpeed, then the flagged cell is deleted: its diagnostics are cleared.
    client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(version=3, uri=nb_uri),
            change=types.NotebookDocumentChangeEvent(
                cells=types.NotebookDocumentCellChanges(
                    text_content=[
                        types.NotebookDocumentCellContentChanges(
                            document=types.VersionedTextDocumentIdentifier(uri=uris[0], version=3),
                            changes=[types.TextDocumentContentChangeWholeDocument(text=CREATE)],
                        )
                    ]
                )
            ),
        )
    )
    await _until(lambda: len(client.diagnostics.get(uris[3], [])) == 1)
    client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(version=4, uri=nb_uri),
            change=types.NotebookDocumentChangeEvent(
                cells=types.NotebookDocumentCellChanges(
                    structure=types.NotebookDocumentCellChangeStructure(
                        array=types.NotebookCellArrayChange(start=3, delete_count=1, cells=[]),
                        did_close=[types.TextDocumentIdentifier(uri=uris[3])],
                    )
                )
            ),
        )
    )
    await _until(lambda: list(client.diagnostics.get(uris[3], [None])) == [])

    client.notebook_document_did_close(
        types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=nb_uri),
            cell_text_documents=[types.TextDocumentIdentifier(uri=u) for u in uris],
        )
    )


@pytest.mark.asyncio
async def test_quick_fix_fix_all_and_hover_in_a_cell(client: LanguageClient):
    cells = [("code", CREATE), ("code", "%%bash\necho not python"), ("code", SAME_CELL)]
    nb_uri, uris = _open(client, "same.ipynb", cells)
    await _until(lambda: bool(client.diagnostics.get(uris[2])))
    (d,) = client.diagnostics[uris[2]]
    assert d.range.start == types.Position(3, 12)
    enc = _encoder(client)

    actions = await _actions(client, uris[2], d)
    fix = next(a for a in actions if a.title.startswith("Set up model and optimizer jointly"))
    edits = _edits(fix.edit)
    assert list(edits) == [uris[2]]
    fixed = _apply(SAME_CELL, edits[uris[2]], enc)
    assert "model, optimizer = fabric.setup(model, optimizer)" in fixed and "setup_module" not in fixed

    (fix_all,) = await _actions(client, uris[2], d, only=["source.fixAll.fabric-lsp"])
    edits = _edits(fix_all.edit)
    assert list(edits) == [uris[2]]
    assert _apply(SAME_CELL, edits[uris[2]], enc) == fixed

    hover = await asyncio.wait_for(
        client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uris[2]), types.Position(3, 14))
        ),
        TIMEOUT,
    )
    assert hover is not None and "DeepSpeed" in hover.contents.value
    assert "(same.ipynb:cell 1:4)" in hover.contents.value  # places named by cell, not program line
    assert "same.ipynb:4" not in hover.contents.value

    # Closing the notebook clears its cells' diagnostics.
    client.notebook_document_did_close(
        types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=nb_uri),
            cell_text_documents=[types.TextDocumentIdentifier(uri=u) for u in uris],
        )
    )
    await _until(lambda: list(client.diagnostics.get(uris[2], [None])) == [])


@pytest.mark.asyncio
async def test_notebook_sync_is_advertised(client: LanguageClient):
    sync = client.init_result.capabilities.notebook_document_sync  # type: ignore[attr-defined]
    assert sync is not None and sync.save
    (selector,) = sync.notebook_selector
    assert selector.notebook == "jupyter-notebook" and [c.language for c in selector.cells] == ["python"]
