"""LSP notebook documents: ``notebookDocument/didOpen|didChange|didSave|didClose``.

A notebook is analysed as one program (:class:`fabric_lsp.documents.notebook.Program`, with the
notebook's path, so the engine knows it is a notebook); its findings are published per cell
URI. Each cell's findings are stored as the server's result for that cell's text document, so
quick fixes, "disable for this line" and their resolution work on cells unchanged; fix-all and
hover, which need the whole program, are answered here (:func:`fix_all_actions`, :func:`hover`).
"""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import unquote

from lsprotocol import types
from pygls.uris import to_fs_path

from fabric_lsp.documents.notebook import Cell, Program
from fabric_lsp.engine.analyzer import Analysis
from fabric_lsp.engine.findings import Finding, Pos, Span
from fabric_lsp.engine.fixer import fix_text
from fabric_lsp.engine.python.text import Lines
from fabric_lsp.lsp.positions import Encoder
from fabric_lsp.lsp.results import Result

NOTEBOOK_TYPE = "jupyter-notebook"
#: What the server advertises: Jupyter notebooks, their Python cells.
SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[
        types.NotebookDocumentFilterWithCells(
            cells=[types.NotebookCellLanguage(language="python")], notebook=NOTEBOOK_TYPE
        )
    ],
    save=True,
)


@dataclass
class NotebookState:
    """The last analysis of one notebook: its program, the engine's analysis of it (for hover)
    and which cell URI each cell is."""

    version: int
    program: Program
    cell_uris: list[str]
    analysis: Analysis | None = None
    published: set[str] = field(default_factory=set)


class Session(Protocol):
    """What the notebook handlers use of the session (:class:`fabric_lsp.lsp.session.FabricLanguageServer`)."""

    loop: asyncio.AbstractEventLoop
    notebooks: dict[str, NotebookState]
    results: dict[str, Result]
    tasks: dict[str, asyncio.Task]
    encoder: Encoder
    analyzers: Any
    supports_document_changes: bool

    @property
    def workspace(self) -> Any: ...  # pygls' workspace: the open documents and notebooks
    @property
    def executor(self) -> Executor: ...

    def analyze(self, uri: str, text: str) -> Analysis: ...
    def analyzer_for(self, config: Any) -> Any: ...
    def config_for(self, path: str | None) -> Any: ...
    def schedule(self, uri: str, delay: float | None = None) -> None: ...
    def show_config_problems(self) -> None: ...
    def to_diagnostic(self, uri: str, result: Result, index: int, f: Finding) -> types.Diagnostic: ...
    def text_document_publish_diagnostics(self, params: types.PublishDiagnosticsParams) -> None: ...


def notebook_uri_of(ls: Session, uri: str) -> str | None:
    """The URI of the notebook whose cell ``uri`` is (or ``uri`` itself if it is a notebook)."""
    workspace = ls.workspace
    if workspace.get_notebook_document(notebook_uri=uri) is not None:
        return uri
    notebook = workspace.get_notebook_document(cell_uri=uri)
    return notebook.uri if notebook is not None else None


def _path(notebook_uri: str) -> str | None:
    return to_fs_path(notebook_uri) if notebook_uri.startswith("file:") else None


def _program(ls: Session, notebook: types.NotebookDocument) -> tuple[Program, list[str]]:
    """The notebook's program; the boundary nonce stays the same from one version to the next
    (while no cell contains it), so unchanged statements keep their text for incremental reuse."""
    cells, uris = [], []
    for index, cell in enumerate(notebook.cells):
        doc = ls.workspace.text_documents.get(unquote(cell.document))
        text = doc.source if doc is not None else ""
        python = cell.kind == types.NotebookCellKind.Code and (doc is None or (doc.language_id or "python") == "python")
        cells.append(Cell(index, text, python))
        uris.append(cell.document)
    previous = ls.notebooks.get(notebook.uri)
    nonce = previous.program.nonce if previous is not None else None
    if nonce is not None and any(nonce in c.text for c in cells):
        nonce = None
    return Program(cells, nonce), uris


async def analyze(ls: Session, notebook_uri: str) -> None:
    """Analyse the notebook's program and publish its findings per cell (the session runs this
    debounced, as it does a text document's analysis: :meth:`~fabric_lsp.lsp.session.Session.schedule`)."""
    notebook = ls.workspace.get_notebook_document(notebook_uri=notebook_uri)
    if notebook is None:
        return
    version = notebook.version
    program, uris = _program(ls, notebook)
    versions = {uri: _doc_version(ls, uri) for uri in uris}
    loop = asyncio.get_running_loop()
    ls.loop = loop
    analysis = await loop.run_in_executor(ls.executor, ls.analyze, notebook_uri, program.text)
    current = ls.workspace.get_notebook_document(notebook_uri=notebook_uri)
    if current is None or current.version != version or any(_doc_version(ls, u) != v for u, v in versions.items()):
        return  # a newer version is on its way
    ls.show_config_problems()
    _publish(ls, notebook_uri, NotebookState(version, program, uris, analysis), analysis.findings, versions)


def _doc_version(ls: Session, uri: str) -> int | None:
    doc = ls.workspace.text_documents.get(unquote(uri))  # pygls keys documents by unquoted URI
    return doc.version if doc is not None else None


def _publish(ls: Session, notebook_uri: str, state: NotebookState, findings: list[Finding], versions: dict) -> None:
    by_cell: dict[int, list] = {}
    for f in findings:
        mapped = state.program.to_cells(f)
        if mapped is not None:
            by_cell.setdefault(mapped.cell, []).append(mapped)
    previous = ls.notebooks.get(notebook_uri)
    for uri in (previous.published if previous else set()) - set(state.cell_uris):
        _clear(ls, uri)  # a cell that was deleted
    for index, uri in enumerate(state.cell_uris):
        mapped_findings = by_cell.get(index, [])
        text = state.program.cells[index].text
        result = Result(versions[uri], text, Lines(text), [m.finding for m in mapped_findings])
        ls.results[uri] = result
        diagnostics = [_diagnostic(ls, state, uri, result, i, m) for i, m in enumerate(mapped_findings)]
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=result.version)
        )
        state.published.add(uri)
    ls.notebooks[notebook_uri] = state


def _diagnostic(ls: Session, state: NotebookState, uri: str, result, index: int, mapped) -> types.Diagnostic:
    """The server's diagnostic for a cell's finding, with related locations in their own cells."""
    from dataclasses import replace

    f = mapped.finding
    diagnostic = ls.to_diagnostic(
        uri, result, index, replace(f, related=tuple(r for r in f.related if r.path is not None))
    )
    related = list(diagnostic.related_information or [])
    for r, cell in zip(f.related, mapped.related_cells):
        if cell is None:
            continue
        lines = Lines(state.program.cells[cell].text)
        location = types.Location(state.cell_uris[cell], ls.encoder.range_to_lsp(lines, r.span))
        related.append(types.DiagnosticRelatedInformation(location, r.message))
    diagnostic.related_information = related or None
    return diagnostic


def _clear(ls: Session, uri: str) -> None:
    ls.results.pop(uri, None)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


def close(ls: Session, notebook_uri: str, cell_uris: list[str]) -> None:
    task = ls.tasks.pop(notebook_uri, None)
    if task is not None:
        task.cancel()
    state = ls.notebooks.pop(notebook_uri, None)
    for uri in set(cell_uris) | (state.published if state else set()):
        _clear(ls, uri)


# -- requests on cells ------------------------------------------------------------------------
async def fix_all_actions(ls: Session, cell_uri: str, kind: str) -> list[types.CodeAction]:
    """Fix-all on a cell fixes the whole notebook: one edit per changed cell, each addressed
    to its cell URI."""
    notebook_uri = notebook_uri_of(ls, cell_uri)
    state = ls.notebooks.get(notebook_uri) if notebook_uri else None
    if state is None or notebook_uri is None:
        return []
    path = _path(notebook_uri)
    config = ls.config_for(path)
    program = state.program

    def fix():  # in the worker, where the analyzers are made and used
        return fix_text(
            program.text, ls.analyzer_for(config), path, transform=lambda fs: program.fixable(config.apply(fs))
        )

    fixed = await asyncio.get_running_loop().run_in_executor(ls.executor, fix)
    if fixed.text == program.text or ls.notebooks.get(notebook_uri) is not state:
        return []
    changes = []
    for index, text in sorted(program.changed_cells(fixed.text).items()):
        uri = state.cell_uris[index]
        lines = Lines(program.cells[index].text)
        whole = types.TextEdit(ls.encoder.range_to_lsp(lines, Span(Pos(0, 0), Pos(len(lines), 0))), text)
        changes.append((uri, _doc_version(ls, uri), [whole]))
    if ls.supports_document_changes:
        edit = types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(uri=u, version=v), edits=e
                )
                for u, v, e in changes
            ]
        )
    else:
        edit = types.WorkspaceEdit(changes={u: e for u, _, e in changes})
    return [types.CodeAction(title="fabric-lsp: fix all safely fixable problems", kind=kind, edit=edit)]


async def hover(ls: Session, cell_uri: str, position: types.Position) -> str | None:
    """Hover in a cell: explained over the whole notebook's program."""
    notebook_uri = notebook_uri_of(ls, cell_uri)
    notebook = ls.workspace.get_notebook_document(notebook_uri=notebook_uri) if notebook_uri else None
    if notebook is None or ls.analyzers is None or notebook_uri is None:
        return None
    state = ls.notebooks.get(notebook_uri)
    if state is not None and state.version == notebook.version and state.analysis is not None:
        program, uris, analysis = state.program, state.cell_uris, state.analysis
    else:  # this version's diagnostics are still being computed: compute them here
        program, uris = _program(ls, notebook)
        analysis = await asyncio.get_running_loop().run_in_executor(ls.executor, ls.analyze, notebook_uri, program.text)
    keys = [unquote(u) for u in uris]
    if unquote(cell_uri) not in keys:
        return None
    index = keys.index(unquote(cell_uri))
    pos = program.to_program(index, ls.encoder.from_lsp(Lines(program.cells[index].text), position))
    markdown = analysis.hover(pos) if pos is not None else None
    path = _path(notebook_uri)
    return program.relabel(markdown, os.path.basename(path) if path else "this file") if markdown else None


def register(server) -> None:
    """The notebook handlers (pygls has already updated its workspace when they run)."""

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    async def did_open(ls, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri, delay=0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    async def did_change(ls, params: types.DidChangeNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    async def did_save(ls, params: types.DidSaveNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri, delay=0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    async def did_close(ls, params: types.DidCloseNotebookDocumentParams) -> None:
        close(ls, params.notebook_document.uri, [c.uri for c in params.cell_text_documents])


__all__ = ["SYNC", "analyze", "fix_all_actions", "hover", "notebook_uri_of", "register"]
