"""The language server: a thin pygls adapter over :mod:`fabric_lsp.engine`.

Results are computed once per document version (in one worker thread, debounced, stale runs
dropped) and reused by diagnostics and code actions. Every range goes through
:class:`fabric_lsp.lsp.positions.Encoder`, in the encoding negotiated at ``initialize``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from fabric_lsp import declared_version
from fabric_lsp.config import PYPROJECT, SECTION, Config
from fabric_lsp.engine.findings import Applicability, Pos, Span
from fabric_lsp.engine.fixer import fix_text
from fabric_lsp.engine.program import batch_scripts
from fabric_lsp.facts import BATCH_SCRIPT_SUFFIXES
from fabric_lsp.lsp import head_start
from fabric_lsp.lsp import notebooks as notebook_server
from fabric_lsp.lsp.head_start import HeadStart
from fabric_lsp.lsp.positions import Encoder
from fabric_lsp.lsp.session import SOURCE, FabricLanguageServer

FIX_ALL_KIND = "source.fixAll.fabric-lsp"
#: Files the server watches (where the client registers watchers dynamically).
WATCHED_GLOBS = (
    "**/*.py",
    *declared_version.DECLARATION_GLOBS,
    *(f"**/*{suffix}" for suffix in BATCH_SCRIPT_SUFFIXES),
)
#: ``workspace/diagnostic`` analyses the project's files this many at a time in the worker,
#: so that open documents are analysed between two batches.
WORKSPACE_BATCH = 64

server = FabricLanguageServer()


@server.feature(types.INITIALIZE)
def initialize(ls: FabricLanguageServer, params: types.InitializeParams) -> None:
    ls.update_settings(params.initialization_options, "initializationOptions")
    ls.encoder = Encoder(ls.workspace.position_encoding or "utf-16")
    caps = params.capabilities
    ca = caps.text_document.code_action if caps.text_document else None
    ls.supports_resolve = bool(ca and ca.resolve_support and "edit" in (ca.resolve_support.properties or []))
    we = caps.workspace.workspace_edit if caps.workspace else None
    ls.supports_document_changes = bool(we and we.document_changes)
    wf = caps.workspace.did_change_watched_files if caps.workspace else None
    ls.supports_watched_files = bool(wf and wf.dynamic_registration)
    ls.supports_configuration = bool(caps.workspace and caps.workspace.configuration)
    ih = caps.workspace.inlay_hint if caps.workspace else None
    ls.supports_inlay_refresh = bool(ih and ih.refresh_support)
    offer_pull_diagnostics(ls, caps)
    root_uri = None
    if params.workspace_folders:
        root_uri = params.workspace_folders[0].uri
    elif params.root_uri:
        root_uri = params.root_uri
    ls.root = to_fs_path(root_uri) if root_uri else (params.root_path or None)
    ls.setup_engine()
    head = ls.head_start
    if ls.pull and ls.root and (head is None or head.workers is None):  # no head start's workers under way:
        ls.prestart_workers()  # those of its first workspace report start from the fork server
    if ls.head_start is not None:
        asyncio.get_running_loop().call_later(head_start.WAIT, ls.drop_head_start)


@server.feature(types.SHUTDOWN)
def shutdown(ls: FabricLanguageServer, params: None) -> None:
    ls.drop_head_start()


def _path_of(uri: str) -> str | None:
    return to_fs_path(uri) if uri.startswith("file:") else None


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: FabricLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.schedule(uri, delay=0)
    path = _path_of(uri)
    if path is not None and not _same_as_disk(path, params.text_document.text):
        # the buffer's text now wins over the disk; a new buffer is a new module
        ls.module_changed(path, appeared_or_vanished=not os.path.isfile(path))


def _same_as_disk(path: str, text: str) -> bool:
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            return fh.read() == text
    except (OSError, UnicodeDecodeError):
        return False


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: FabricLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.schedule_edit(uri)
    path = _path_of(uri)
    if path is not None:
        ls.module_changed(path)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: FabricLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    if uri.endswith("/" + PYPROJECT):
        ls.reload_config()
        return
    if declared_version.is_declaration(uri):  # requirements.txt, setup.py, ...: the declared version
        ls.reload_config()
    ls.schedule(uri, delay=0)
    path = _path_of(uri)
    if path is not None:
        ls.module_changed(path)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
async def did_close(ls: FabricLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    task = ls.tasks.pop(uri, None)
    if task is not None:
        task.cancel()
    ls.results.pop(uri, None)
    ls.last_typed.pop(uri, None)
    ls.graph.forget(uri)
    if not ls.pull:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
    path = _path_of(uri)
    if path is not None:  # the disk's text wins again; an unsaved new buffer is gone
        ls.module_changed(path, appeared_or_vanished=not os.path.isfile(path))


@server.feature(types.INITIALIZED)
async def initialized(ls: FabricLanguageServer, params: types.InitializedParams) -> None:
    if not ls.supports_watched_files:
        return  # the server still re-reads pyproject.toml on didSave and on its next analysis
    watchers = [types.FileSystemWatcher(glob_pattern=glob) for glob in WATCHED_GLOBS]
    options = types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers)
    registration = types.Registration(
        id="fabric-lsp-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options
    )
    try:
        await asyncio.wait_for(
            ls.client_register_capability_async(types.RegistrationParams(registrations=[registration])), 10
        )
    except Exception as exc:
        ls.log_message(f"fabric-lsp: could not watch files ({type(exc).__name__}: {exc})", types.MessageType.Warning)


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
async def did_change_watched_files(ls: FabricLanguageServer, params: types.DidChangeWatchedFilesParams) -> None:
    if any(declared_version.is_declaration(change.uri) for change in params.changes):
        ls.reload_config()  # pyproject.toml, or a file the declared Lightning version is read from
    for change in params.changes:
        path = _path_of(change.uri)
        if path is None or not (path.endswith(".py") or batch_scripts.is_batch_script(path)):
            continue
        appeared = change.type in (types.FileChangeType.Created, types.FileChangeType.Deleted)
        if appeared or change.uri not in ls.workspace.text_documents:  # an open buffer's text wins
            ls.module_changed(path, appeared_or_vanished=appeared)


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: FabricLanguageServer, params: types.DidChangeConfigurationParams) -> None:
    settings = params.settings
    if settings is None and ls.supports_configuration:  # the client wants us to pull them
        item = types.ConfigurationItem(section=SECTION)
        try:
            answer = await asyncio.wait_for(
                ls.workspace_configuration_async(types.ConfigurationParams(items=[item])), 10
            )
            settings = answer[0] if answer else None
        except Exception as exc:
            ls.log_message(
                f"fabric-lsp: workspace/configuration failed ({type(exc).__name__}: {exc})", types.MessageType.Warning
            )
            return
    if settings is not None or ls.supports_configuration:  # null from a client we cannot ask: nothing new
        ls.update_settings(settings, "settings")
    for uri in ls.open_uris():
        ls.schedule(uri, delay=0)


def offer_pull_diagnostics(ls: FabricLanguageServer, caps: types.ClientCapabilities) -> None:
    """Clients that announce ``textDocument.diagnostic`` and accept
    ``workspace/diagnostic/refresh`` pull diagnostics (the server stops pushing to them). The
    others are never offered the methods and keep being pushed to: a client that pulls but
    cannot be asked to pull again would keep stale diagnostics in the documents that depend on
    a module that changed (Neovim 0.11 is one)."""
    refresh = caps.workspace.diagnostics if caps.workspace else None
    ls.supports_refresh = bool(refresh and refresh.refresh_support)
    ls.pull = bool(caps.text_document and caps.text_document.diagnostic) and ls.supports_refresh
    features = ls.protocol.fm.features
    if not ls.pull or types.TEXT_DOCUMENT_DIAGNOSTIC in features:
        return
    options = types.DiagnosticOptions(
        identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=True, work_done_progress=True
    )
    ls.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, options)(document_diagnostic)
    ls.feature(types.WORKSPACE_DIAGNOSTIC)(workspace_diagnostic)


async def document_diagnostic(
    ls: FabricLanguageServer, params: types.DocumentDiagnosticParams
) -> types.DocumentDiagnosticReport:
    uri = params.text_document.uri
    result = await ls.settled_result(uri)
    if result is None:  # not open: what is on disk
        path = _path_of(uri)
        loop = asyncio.get_running_loop()
        reports = await loop.run_in_executor(ls.executor, ls.disk_reports_for, [path] if path else [])
        if not reports:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        result_id, items = reports[0][1].result_id, reports[0][1].diagnostics
    else:
        result_id, items = result.result_id, result.diagnostics
    if params.previous_result_id == result_id:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
    return types.RelatedFullDocumentDiagnosticReport(items=items, result_id=result_id)


async def workspace_diagnostic(
    ls: FabricLanguageServer, params: types.WorkspaceDiagnosticParams
) -> types.WorkspaceDiagnosticReport:
    """Every Python file of the project (open documents at their current version), with
    ``$/progress`` when the client gave a token; unchanged files as unchanged reports. The files
    that need no worker process (unchanged, in the cache, looked at by no rule) are reported first,
    then the modules analysed in worker processes, chunk by chunk as the workers finish them."""
    previous = {p.uri: p.value for p in params.previous_result_ids}
    loop = asyncio.get_running_loop()
    files = await loop.run_in_executor(ls.executor, ls.workspace_model.python_files) if ls.workspace_model else []
    progress = _Progress(ls, params.work_done_token, len(files))
    items: list[types.WorkspaceDocumentDiagnosticReport] = []
    open_paths = {_path_of(uri): uri for uri in ls.workspace.text_documents}
    for uri in open_paths.values():
        result = await ls.settled_result(uri)
        if result is not None:
            items.append(_workspace_item(uri, result.version, result.result_id, result.diagnostics, previous))
    on_disk = [f for f in files if f not in open_paths]
    reports: dict[str, types.WorkspaceDocumentDiagnosticReport] = {}

    async def report(batch: list[str]) -> None:
        for uri, disk in await loop.run_in_executor(ls.executor, ls.disk_reports_for, batch):
            reports[uri] = _workspace_item(uri, None, disk.result_id, disk.diagnostics, previous)
        progress.advance(len(batch))

    try:
        head = ls.claim_head_start()
        await loop.run_in_executor(ls.executor, ls.start_disk_reports, head)
        chunks = await loop.run_in_executor(ls.executor, ls.submit_disk_analyses, on_disk, head)
        in_workers = {path for _, paths in chunks for path in paths}
        rest = [f for f in on_disk if f not in in_workers]
        for start in range(0, len(rest), WORKSPACE_BATCH):
            await report(rest[start : start + WORKSPACE_BATCH])
        waiting = {asyncio.wrap_future(future): paths for future, paths in chunks}
        while waiting:  # open documents are analysed between two chunks
            finished, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            for future in finished:
                await report(waiting.pop(future))
    finally:
        await loop.run_in_executor(ls.executor, ls.end_disk_reports)
    progress.end()
    position = {uri: i for i, uri in enumerate(map(from_fs_path, on_disk))}
    items += [item for _, item in sorted(reports.items(), key=lambda kv: position[kv[0]])]
    return types.WorkspaceDiagnosticReport(items=items)


def _workspace_item(
    uri: str, version: int | None, result_id: str, items: list[types.Diagnostic], previous: dict[str, str]
):
    if previous.get(uri) == result_id:
        return types.WorkspaceUnchangedDocumentDiagnosticReport(uri=uri, result_id=result_id, version=version)
    return types.WorkspaceFullDocumentDiagnosticReport(uri=uri, items=items, result_id=result_id, version=version)


class _Progress:
    """Work-done progress of ``workspace/diagnostic`` (nothing when the client gave no token)."""

    def __init__(self, ls: FabricLanguageServer, token: types.ProgressToken | None, total: int) -> None:
        self.ls, self.token, self.total, self.done, self.shown = ls, token, total, 0, -1
        if token is not None:
            begin = types.WorkDoneProgressBegin(title="fabric-lsp", message=f"checking {total} files", percentage=0)
            ls.work_done_progress.begin(token, begin)

    def advance(self, count: int) -> None:
        self.done += count
        percentage = 100 * self.done // max(self.total, 1)
        if self.token is not None and percentage != self.shown:
            self.shown = percentage
            report = types.WorkDoneProgressReport(message=f"{self.done}/{self.total} files", percentage=percentage)
            self.ls.work_done_progress.report(self.token, report)

    def end(self) -> None:
        if self.token is not None:
            self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=f"checked {self.done} files"))


def _wanted(only: list[str] | None, kind: str) -> bool:
    if not only:
        return kind != FIX_ALL_KIND
    return any(kind == k or kind.startswith(k + ".") for k in only)


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll, FIX_ALL_KIND],
        resolve_provider=True,
    ),
)
async def code_action(ls: FabricLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    result = ls.current_result(uri)
    if result is None:
        return []
    only = [str(getattr(k, "value", k)) for k in (params.context.only or [])]
    actions: list[types.CodeAction] = []
    want = ls.encoder.range_from_lsp(result.lines, params.range)
    if _wanted(only, types.CodeActionKind.QuickFix.value):
        for index, f in enumerate(result.findings):
            if f.span.end < want.start or want.end < f.span.start:
                continue
            diag = ls.to_diagnostic(uri, result, index, f)
            if f.fix is not None:
                action = types.CodeAction(
                    title=f.fix.title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    is_preferred=f.fix.applicability is Applicability.SAFE,
                    data={"uri": uri, "version": result.version, "index": index, "what": "fix"},
                )
                if not ls.supports_resolve:
                    action.edit = ls.fix_edit(uri, result, f)
                actions.append(action)
            action = types.CodeAction(
                title=f"Disable {f.code} for this line",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diag],
                data={"uri": uri, "version": result.version, "index": index, "what": "noqa"},
            )
            if not ls.supports_resolve:
                action.edit = ls.noqa_edit(uri, result, f)
            actions.append(action)
    if only and _wanted(only, FIX_ALL_KIND) and notebook_server.notebook_uri_of(ls, uri) is not None:
        actions.extend(await notebook_server.fix_all_actions(ls, uri, FIX_ALL_KIND))
    elif (
        only
        and _wanted(only, FIX_ALL_KIND)
        and any(f.fix and f.fix.applicability is Applicability.SAFE for f in result.findings)
    ):
        path = to_fs_path(uri) if uri.startswith("file:") else None
        loop = asyncio.get_running_loop()
        config = ls.config_for(path)
        fixed = await loop.run_in_executor(ls.executor, _fix_all, ls, config, result.text, path)
        if fixed.text != result.text and ls.current_result(uri) is result:
            end = Pos(len(result.lines), 0)
            edit = types.TextEdit(ls.encoder.range_to_lsp(result.lines, Span(Pos(0, 0), end)), fixed.text)
            actions.append(
                types.CodeAction(
                    title="fabric-lsp: fix all safely fixable problems",
                    kind=FIX_ALL_KIND,
                    edit=ls.workspace_edit(uri, result.version, [edit]),
                )
            )
    return actions


def _fix_all(ls: FabricLanguageServer, config: Config, text: str, path: str | None):
    """Worker thread (where the analyzers are made and used): ``text`` with every safe fix applied."""
    return fix_text(text, ls.analyzer_for(config), path, transform=config.apply)


@server.feature(types.CODE_ACTION_RESOLVE)
def code_action_resolve(ls: FabricLanguageServer, action: types.CodeAction) -> types.CodeAction:
    data = action.data if isinstance(action.data, dict) else {}
    uri = data.get("uri")
    if not isinstance(uri, str):
        return action
    result = ls.current_result(uri)
    if result is None or result.version != data.get("version"):
        return action  # stale: the document changed since the action was offered; no edit
    index = data.get("index")
    if not isinstance(index, int) or not 0 <= index < len(result.findings):
        return action
    f = result.findings[index]
    if data.get("what") == "fix" and f.fix is not None:
        action.edit = ls.fix_edit(uri, result, f)
    elif data.get("what") == "noqa":
        action.edit = ls.noqa_edit(uri, result, f)
    return action


@server.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: FabricLanguageServer, params: types.HoverParams) -> types.Hover | None:
    uri = params.text_document.uri
    if ls.document(uri) is None or ls.analyzers is None:
        return None
    if notebook_server.notebook_uri_of(ls, uri) is not None:
        markdown = await notebook_server.hover(ls, uri, params.position)
    else:
        analysis, lines = await ls.analysis_of(uri)
        markdown = analysis.hover(ls.encoder.from_lsp(lines, params.position))
    if not markdown:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown))


@server.feature(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=False))
async def inlay_hint(ls: FabricLanguageServer, params: types.InlayHintParams) -> list[types.InlayHint]:
    return await ls.inlay_hints(params.text_document.uri, params.range)


notebook_server.register(server)


def run(tcp: tuple[str, int] | None = None, log_file: str | None = None, head: HeadStart | None = None) -> int:
    """Serve on ``tcp``, else on stdio (from what ``head`` read of it first, when given)."""
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        handlers.append(logging.FileHandler(log_file))
    logging.basicConfig(
        level=logging.WARNING if not os.environ.get("FABRIC_LSP_DEBUG") else logging.DEBUG, handlers=handlers
    )
    import gc

    # the long-lived pygls/lsprotocol objects leave the generations the GC scans (not collected
    # first: a collection here finds ~50 objects to free, in ~20 ms on the way to the first answer)
    gc.freeze()
    if tcp:
        server.start_tcp(*tcp)
    elif head is not None:
        server.head_start = head
        server.start_io(stdin=head.stream(sys.stdin.buffer))
    else:
        server.start_io()
    return 0
