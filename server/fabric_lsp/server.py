"""The language server: a thin pygls adapter over :mod:`fabric_lsp.engine`.

Results are computed once per document version (in one worker thread, debounced, stale runs
dropped) and reused by diagnostics and code actions. Every range goes through
:class:`fabric_lsp.positions.Encoder`, in the encoding negotiated at ``initialize``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Optional
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import TextDocument

from fabric_lsp import __version__, notebook_server
from fabric_lsp.engine.analyzer import Analysis, Analyzer, noqa_codes
from fabric_lsp.engine.fixer import fix_text
from fabric_lsp.engine.model import Applicability, Finding, Pos, Severity, Span, resolve_severity
from fabric_lsp.engine.text import Lines
from fabric_lsp.engine.workspace import Workspace
from fabric_lsp.config import PYPROJECT, SECTION, Config, Layer, Resolver, client_layer
from fabric_lsp.positions import Encoder
from fabric_lsp.rules import ALL_RULES

SOURCE = "fabric-lsp"
FIX_ALL_KIND = "source.fixAll.fabric-lsp"
log = logging.getLogger("fabric_lsp")


@dataclass
class Result:
    version: Optional[int]
    text: str
    lines: Lines
    findings: list[Finding]
    #: the analysis of this version: hover reads its verdicts (the diagnostics' own)
    analysis: Optional[Analysis] = None


class FabricProtocol(LanguageServerProtocol):
    """pygls' protocol, but a request whose params do not fit its method gets the JSON-RPC error
    response it is owed (-32602) instead of only a message to the user."""

    def structure_message(self, data):
        try:
            return super().structure_message(data)
        except (JsonRpcInvalidParams, JsonRpcInternalError) as exc:
            if isinstance(data, dict) and "id" in data and "method" in data:
                method = str(data.get("method"))
                self._send_response(data["id"], error=types.ResponseError(code=exc.CODE, message=f"{exc.MESSAGE} for {method}"))
                return JsonRPCNotification(method="$/fabric-lsp/ignored", jsonrpc="2.0", params=None)
            raise


class FabricLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "fabric-lsp",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=FabricProtocol,
            notebook_document_sync=notebook_server.SYNC,
        )
        self.options = Config()  # the session's settings: the editor's layers over the defaults
        self.init_settings: Layer = {}  # initializationOptions, validated
        self.settings: Layer = {}  # the latest didChangeConfiguration / workspace/configuration
        self.encoder = Encoder()
        self.workspace_model: Optional[Workspace] = None
        self.analyzer: Optional[Analyzer] = None
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fabric-lsp-analysis")
        self.results: dict[str, Result] = {}  # by text document (or notebook cell) URI
        self.notebooks: dict[str, notebook_server.NotebookState] = {}
        self.tasks: dict[str, asyncio.Task] = {}
        self.supports_resolve = False
        self.supports_document_changes = False
        self.root: Optional[str] = None
        self.configs = Resolver()  # [tool.fabric-lsp] of the closest pyproject.toml
        self.supports_watched_files = False
        self.supports_configuration = False  # workspace/configuration

    # -- plumbing ------------------------------------------------------------------------------
    def log_message(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        loop = getattr(self, "loop", None)
        if loop is not None and threading.current_thread() is not threading.main_thread():
            loop.call_soon_threadsafe(self.log_message, message, kind)  # from the analysis thread
            return
        try:
            self.window_log_message(types.LogMessageParams(type=kind, message=message))
        except Exception:  # no client yet
            print(message, file=sys.stderr)

    def setup_engine(self) -> None:
        self.workspace_model = Workspace(self.root, self.options.environment_path, overlay=self._overlay)
        self.analyzer = Analyzer(self.workspace_model, ALL_RULES, log=self.log_message)
        self.configs.set_overrides(self.client_layers())

    def _overlay(self, path: str) -> Optional[str]:
        uri = from_fs_path(path)
        try:
            doc = self.document(uri) if uri else None
        except Exception:
            return None
        return doc.source if doc is not None else None

    def document(self, uri: str) -> Optional[TextDocument]:
        """The open document ``uri`` (pygls keys documents by the unquoted URI; clients send it
        percent-quoted, e.g. a space as %20)."""
        return self.workspace.text_documents.get(unquote(uri))

    def open_uris(self) -> list[str]:
        """The URIs of the open documents as the client sent them."""
        return [doc.uri for doc in list(self.workspace.text_documents.values())]

    def severity(self, finding: Finding) -> types.DiagnosticSeverity:
        override = finding.extra.get("severity_override")
        severity = resolve_severity(
            finding.certainty,
            certain=Severity(self.options.certain_severity),
            possible=Severity(self.options.possible_severity),
            override=Severity(override) if override else None,
        )
        return {
            Severity.ERROR: types.DiagnosticSeverity.Error,
            Severity.WARNING: types.DiagnosticSeverity.Warning,
            Severity.INFORMATION: types.DiagnosticSeverity.Information,
            Severity.HINT: types.DiagnosticSeverity.Hint,
        }[severity]

    # -- analysis ------------------------------------------------------------------------------
    def announce(self, uri: str) -> None:
        """Tell the workspace model that the text of ``uri`` changed (an open buffer's text
        overrides the disk)."""
        if self.workspace_model is not None and uri.startswith("file:"):
            self.workspace_model.changed(to_fs_path(uri))

    def schedule(self, uri: str, delay: Optional[float] = None) -> None:
        notebook_uri = notebook_server.notebook_uri_of(self, uri)
        if notebook_uri is not None:  # a cell: the whole notebook is analysed
            notebook_server.schedule(self, notebook_uri, delay)
            return
        old = self.tasks.pop(uri, None)
        if old is not None:
            old.cancel()
        delay = self.options.debounce_ms / 1000 if delay is None else delay
        self.tasks[uri] = asyncio.get_running_loop().create_task(self._analyze_later(uri, delay))

    async def _analyze_later(self, uri: str, delay: float) -> None:
        try:
            if delay > 0:
                await asyncio.sleep(delay)
            doc = self.document(uri)
            if doc is None:
                return
            version, text = doc.version, doc.source
            loop = asyncio.get_running_loop()
            self.loop = loop
            done = await loop.run_in_executor(self.executor, self._result_if_current, uri, version, text)
            if done is None:
                return  # superseded before the worker got to it
            result, diagnostics = done
            self.show_config_problems()
            current = self.document(uri)
            if current is None or current.version != version:
                return  # a newer version is on its way; never publish stale results
            self.results[uri] = result
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
            )
        except asyncio.CancelledError:
            pass
        except Exception:
            self.log_message(f"fabric-lsp: analysis of {uri} failed:\n{traceback.format_exc()}", types.MessageType.Error)
        finally:
            if self.tasks.get(uri) is asyncio.current_task():
                self.tasks.pop(uri, None)

    def config_for(self, path: Optional[str]) -> Config:
        """pyproject.toml's [tool.fabric-lsp] for ``path``, with the editor's settings on top."""
        return self.configs.for_path(path or self.root).for_file(path)

    def client_layers(self) -> list[Layer]:
        env = self.workspace_model.environment_path if self.workspace_model else None
        return [{"environment-path": env} if env else {}, self.init_settings, self.settings]

    def update_settings(self, raw, where: str) -> None:
        """Rebuild every setting from the defaults, pyproject.toml and the editor's layers (a key
        the editor no longer sends, or sends as null, is back to its default); one message
        for every invalid value."""
        layer, problems = client_layer(raw, where)
        if where == "initializationOptions":
            self.init_settings = layer
        else:
            self.settings = layer
        if problems:
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message="\n".join(problems)))
        old_env, self.options = self.options.environment_path, Config.build(self.client_layers()[1:])
        if self.workspace_model is not None and self.options.environment_path != old_env:
            self.setup_engine()
        self.configs.set_overrides(self.client_layers())

    def show_config_problems(self) -> None:
        problems = self.configs.drain_problems()  # each names its key and pyproject.toml
        if problems:  # one message per (re)load, however many keys are wrong
            message = "\n".join(f"fabric-lsp: {p}" for p in problems)
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))

    def reload_config(self) -> None:
        """pyproject.toml changed: re-read it (by its new mtime) and re-publish every document."""
        for uri in self.open_uris():
            if not uri.endswith(PYPROJECT):
                self.schedule(uri, delay=0)

    def _result_if_current(self, uri: str, version: Optional[int], text: str):
        """Worker thread: the findings, the line index and the LSP diagnostics of one version —
        everything but the sending, so the event loop stays free for the next keystroke."""
        analysis = self._analyze_if_current(uri, version, text)
        if analysis is None:
            return None
        result = Result(version, text, Lines(text), analysis.findings, analysis)
        findings = result.findings
        return result, [self.to_diagnostic(uri, result, i, f) for i, f in enumerate(findings)]

    def _analyze_if_current(self, uri: str, version: Optional[int], text: str) -> Optional[Analysis]:
        """Runs in the worker thread: skip versions that a newer edit has already replaced, so
        that a burst of keystrokes queues no backlog of work."""
        doc = self.document(uri)
        if doc is None or doc.version != version:
            return None
        return self._analyze(uri, text)

    def _analyze(self, uri: str, text: str) -> Analysis:
        path = to_fs_path(uri) if uri.startswith("file:") else None
        try:
            config = self.config_for(path)
            if path and config.is_excluded(path, root=config.root or self.root):
                return Analysis(text, path)
            analysis = self.analyzer.analysis(text, path, report_unknown=bool(config.report_unknown))
            analysis.findings = config.apply(analysis.findings)
            return analysis
        except RecursionError:
            self.log_message(f"fabric-lsp: {uri} is too deeply nested to analyse", types.MessageType.Warning)
            return Analysis(text, path)

    def to_diagnostic(self, uri: str, result: Result, index: int, f: Finding) -> types.Diagnostic:
        related = []
        for r in f.related:
            if r.path is None:
                related.append(types.DiagnosticRelatedInformation(types.Location(uri, self.encoder.range_to_lsp(result.lines, r.span)), r.message))
            else:
                module = self.workspace_model.load_path(r.path) if self.workspace_model else None
                if module is not None:
                    related.append(
                        types.DiagnosticRelatedInformation(
                            types.Location(from_fs_path(r.path), self.encoder.range_to_lsp(module.lines, r.span)), r.message
                        )
                    )
        return types.Diagnostic(
            range=self.encoder.range_to_lsp(result.lines, f.span),
            message=f.message,
            severity=self.severity(f),
            code=f.code,
            code_description=types.CodeDescription(href=f.url) if f.url else None,
            source=SOURCE,
            related_information=related or None,
            data={"version": result.version, "index": index},
        )

    # -- edits ---------------------------------------------------------------------------------
    def workspace_edit(self, uri: str, version: Optional[int], edits: list[types.TextEdit]) -> types.WorkspaceEdit:
        if self.supports_document_changes:
            return types.WorkspaceEdit(
                document_changes=[
                    types.TextDocumentEdit(
                        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                        edits=edits,
                    )
                ]
            )
        return types.WorkspaceEdit(changes={uri: edits})

    def fix_edit(self, uri: str, result: Result, f: Finding) -> types.WorkspaceEdit:
        edits = [types.TextEdit(self.encoder.range_to_lsp(result.lines, e.span), e.new_text) for e in f.fix.edits]
        return self.workspace_edit(uri, result.version, edits)

    def noqa_edit(self, uri: str, result: Result, f: Finding) -> types.WorkspaceEdit:
        line = f.span.end.line
        content = result.lines.content(line)
        codes = noqa_codes(content)
        import re

        m = re.search(r"#\s*noqa(:\s*[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*)?", content, re.IGNORECASE)
        if m is not None and codes:
            new = f"# noqa: {', '.join(sorted(codes | {f.code}))}"
            span = Span(Pos(line, m.start()), Pos(line, m.end()))
        else:
            stripped = content.rstrip()
            new = f"  # noqa: {f.code}"
            span = Span(Pos(line, len(stripped)), Pos(line, len(content)))
        edit = types.TextEdit(self.encoder.range_to_lsp(result.lines, span), new)
        return self.workspace_edit(uri, result.version, [edit])

    def current_result(self, uri: str) -> Optional[Result]:
        result = self.results.get(uri)
        doc = self.document(uri)
        if result is None or doc is None or doc.version != result.version:
            return None
        return result


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
    root_uri = None
    if params.workspace_folders:
        root_uri = params.workspace_folders[0].uri
    elif params.root_uri:
        root_uri = params.root_uri
    ls.root = to_fs_path(root_uri) if root_uri else (params.root_path or None)
    ls.setup_engine()


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: FabricLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.announce(params.text_document.uri)
    ls.schedule(params.text_document.uri, delay=0)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: FabricLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.announce(params.text_document.uri)
    ls.schedule(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: FabricLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
    if params.text_document.uri.endswith("/" + PYPROJECT):
        ls.reload_config()
        return
    if ls.workspace_model is not None:
        ls.workspace_model.invalidate(to_fs_path(params.text_document.uri))
    ls.schedule(params.text_document.uri, delay=0)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
async def did_close(ls: FabricLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.announce(uri)
    task = ls.tasks.pop(uri, None)
    if task is not None:
        task.cancel()
    ls.results.pop(uri, None)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


@server.feature(types.INITIALIZED)
async def initialized(ls: FabricLanguageServer, params: types.InitializedParams) -> None:
    if not ls.supports_watched_files:
        return  # the server still re-reads pyproject.toml on didSave and on its next analysis
    options = types.DidChangeWatchedFilesRegistrationOptions(watchers=[types.FileSystemWatcher(glob_pattern=f"**/{PYPROJECT}")])
    registration = types.Registration(id="fabric-lsp-pyproject", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options)
    try:
        await asyncio.wait_for(ls.client_register_capability_async(types.RegistrationParams(registrations=[registration])), 10)
    except Exception as exc:
        ls.log_message(f"fabric-lsp: could not watch {PYPROJECT} ({type(exc).__name__}: {exc})", types.MessageType.Warning)


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
async def did_change_watched_files(ls: FabricLanguageServer, params: types.DidChangeWatchedFilesParams) -> None:
    if any(change.uri.endswith("/" + PYPROJECT) for change in params.changes):
        ls.reload_config()


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: FabricLanguageServer, params: types.DidChangeConfigurationParams) -> None:
    settings = params.settings
    if settings is None and ls.supports_configuration:  # the client wants us to pull them
        item = types.ConfigurationItem(section=SECTION)
        try:
            answer = await asyncio.wait_for(ls.workspace_configuration_async(types.ConfigurationParams(items=[item])), 10)
            settings = answer[0] if answer else None
        except Exception as exc:
            ls.log_message(f"fabric-lsp: workspace/configuration failed ({type(exc).__name__}: {exc})", types.MessageType.Warning)
            return
    ls.update_settings(settings, "settings")
    for uri in ls.open_uris():
        ls.schedule(uri, delay=0)


def _wanted(only: Optional[list[str]], kind: str) -> bool:
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
    elif only and _wanted(only, FIX_ALL_KIND) and any(f.fix and f.fix.applicability is Applicability.SAFE for f in result.findings):
        path = to_fs_path(uri) if uri.startswith("file:") else None
        loop = asyncio.get_running_loop()
        config = ls.config_for(path)
        fixed = await loop.run_in_executor(ls.executor, lambda: fix_text(result.text, ls.analyzer, path, transform=config.apply))
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


@server.feature(types.CODE_ACTION_RESOLVE)
def code_action_resolve(ls: FabricLanguageServer, action: types.CodeAction) -> types.CodeAction:
    data = action.data if isinstance(action.data, dict) else {}
    uri = data.get("uri")
    result = ls.current_result(uri) if uri else None
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
async def hover(ls: FabricLanguageServer, params: types.HoverParams) -> Optional[types.Hover]:
    uri = params.text_document.uri
    doc = ls.document(uri)
    if doc is None or ls.analyzer is None:
        return None
    if notebook_server.notebook_uri_of(ls, uri) is not None:
        markdown = await notebook_server.hover(ls, uri, params.position)
    else:
        result = ls.current_result(uri)
        if result is not None and result.analysis is not None:
            analysis, lines = result.analysis, result.lines
        else:  # the diagnostics of this version are still being computed: compute them here
            text = doc.source
            loop = asyncio.get_running_loop()
            analysis = await loop.run_in_executor(ls.executor, ls._analyze, uri, text)
            lines = Lines(text)
        pos = ls.encoder.from_lsp(lines, params.position)
        markdown = analysis.hover(pos)
    if not markdown:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown))


notebook_server.register(server)


def run(tcp: Optional[tuple[str, int]] = None, log_file: Optional[str] = None) -> int:
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        handlers.append(logging.FileHandler(log_file))
    logging.basicConfig(level=logging.WARNING if not os.environ.get("FABRIC_LSP_DEBUG") else logging.DEBUG, handlers=handlers)
    import gc

    gc.collect()
    gc.freeze()  # the long-lived pygls/lsprotocol objects leave the generations the GC scans
    if tcp:
        server.start_tcp(*tcp)
    else:
        server.start_io()
    return 0
