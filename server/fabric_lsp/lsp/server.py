"""The language server: a thin pygls adapter over :mod:`fabric_lsp.engine`.

Results are computed once per document version (in one worker thread, debounced, stale runs
dropped) and reused by diagnostics and code actions. Every range goes through
:class:`fabric_lsp.lsp.positions.Encoder`, in the encoding negotiated at ``initialize``.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import sys
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import TextDocument

from fabric_lsp import __version__
from fabric_lsp.config import PYPROJECT, SECTION, Config, Layer, Resolver, client_layer
from fabric_lsp.documents.analyzers import Analyzers
from fabric_lsp.engine.analyzer import Analysis, Analyzer
from fabric_lsp.engine.findings import Applicability, Finding, Pos, Severity, Span
from fabric_lsp.engine.fixer import fix_text
from fabric_lsp.engine.program import batch_scripts
from fabric_lsp.engine.python import noqa
from fabric_lsp.engine.python.text import Lines
from fabric_lsp.engine.workspace.dependencies import DependencyGraph
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.facts import BATCH_SCRIPT_SUFFIXES
from fabric_lsp.lsp import notebooks as notebook_server
from fabric_lsp.lsp.positions import Encoder

SOURCE = "fabric-lsp"
FIX_ALL_KIND = "source.fixAll.fabric-lsp"
#: Files the server watches (where the client registers watchers dynamically).
WATCHED_GLOBS = ("**/*.py", f"**/{PYPROJECT}", *(f"**/*{suffix}" for suffix in BATCH_SCRIPT_SUFFIXES))
#: ``workspace/diagnostic`` analyses the project's files this many at a time in the worker,
#: so that open documents are analysed between two batches.
WORKSPACE_BATCH = 64
log = logging.getLogger("fabric_lsp")
_DIAGNOSTIC_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFORMATION: types.DiagnosticSeverity.Information,
    Severity.HINT: types.DiagnosticSeverity.Hint,
}


@dataclass
class Result:
    version: int | None
    text: str
    lines: Lines
    findings: list[Finding]
    #: the analysis of this version: hover reads its verdicts (the diagnostics' own)
    analysis: Analysis | None = None
    diagnostics: list[types.Diagnostic] = field(default_factory=list)
    #: Pull diagnostics' ``resultId``: kept while the diagnostics stay the same.
    result_id: str = ""


@dataclass
class DiskReport:
    """``workspace/diagnostic``'s last report of a file that is not open."""

    stamp: tuple[int, int]  # (mtime_ns, size) of the file analysed
    settings: tuple[Config, Config]  # what it was analysed and reported with (file, session)
    result_id: str
    diagnostics: list[types.Diagnostic]


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
        #: the editor's latest settings, validated: initializationOptions until the first
        #: didChangeConfiguration (or workspace/configuration answer), which replaces them whole
        self.settings: Layer = {}
        self.encoder = Encoder()
        self.workspace_model: Workspace | None = None
        #: one analyzer per file configuration's enabled rules and settings (see :meth:`analyzer_for`)
        self.analyzers: Analyzers | None = None
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fabric-lsp-analysis")
        self.results: dict[str, Result] = {}  # by text document (or notebook cell) URI
        self.notebooks: dict[str, notebook_server.NotebookState] = {}
        self.tasks: dict[str, asyncio.Task] = {}
        self.last_typed: dict[str, float] = {}  # by URI: when its last edit arrived (loop time)
        self.supports_resolve = False
        self.supports_document_changes = False
        self.root: str | None = None
        self.configs = Resolver()  # [tool.fabric-lsp] of the closest pyproject.toml
        self.supports_watched_files = False
        self.supports_configuration = False  # workspace/configuration
        self.graph = DependencyGraph()  # document URI → the modules its last analysis looked up
        self.pull = False  # the client pulls diagnostics (textDocument/diagnostic): never push
        self.supports_refresh = False  # ... and accepts workspace/diagnostic/refresh
        self.supports_inlay_refresh = False  # the client accepts workspace/inlayHint/refresh
        self.disk_reports: dict[str, DiskReport] = {}  # workspace/diagnostic, files not open
        self._result_ids = itertools.count(1)
        self._refresh_task: asyncio.Task | None = None

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
        self.analyzers = Analyzers(self.workspace_model, log=self.log_message)
        self.configs.set_overrides(self.client_layers())

    def analyzer_for(self, config: Config) -> Analyzer | None:
        """The analyzer of a file's configuration: only the rules it enables run, with its
        settings (as ``fabric-lsp check`` does); None before ``initialize``."""
        return self.analyzers.for_config(config) if self.analyzers is not None else None

    def _overlay(self, path: str) -> str | None:
        uri = from_fs_path(path)
        try:
            doc = self.document(uri) if uri else None
        except Exception:
            return None
        return doc.source if doc is not None else None

    def document(self, uri: str) -> TextDocument | None:
        """The open document ``uri`` (pygls keys documents by the unquoted URI; clients send it
        percent-quoted, e.g. a space as %20)."""
        return self.workspace.text_documents.get(unquote(uri))

    def open_uris(self) -> list[str]:
        """The URIs of the open documents as the client sent them."""
        return [doc.uri for doc in list(self.workspace.text_documents.values())]

    @staticmethod
    def severity(finding: Finding) -> types.DiagnosticSeverity:
        """The diagnostic severity of a finding the file's configuration gave its severity
        (``Config.apply``): the one ``fabric-lsp check`` reports."""
        return _DIAGNOSTIC_SEVERITY[finding.severity]

    # -- analysis ------------------------------------------------------------------------------
    def schedule(self, uri: str, delay: float | None = None) -> None:
        notebook_uri = notebook_server.notebook_uri_of(self, uri)
        if notebook_uri is not None:  # a cell: the whole notebook is analysed
            notebook_server.schedule(self, notebook_uri, delay)
            return
        old = self.tasks.pop(uri, None)
        if old is not None:
            old.cancel()
        delay = self.options.debounce_ms / 1000 if delay is None else delay
        self.tasks[uri] = asyncio.get_running_loop().create_task(self._analyze_later(uri, delay))

    def schedule_edit(self, uri: str) -> None:
        """An edit of an open document: analysed at once when it comes after a pause of at least
        the debounce (and no analysis of the document is under way), else once typing pauses
        for the debounce — a burst of keystrokes is analysed at its start and at its end."""
        now = asyncio.get_running_loop().time()
        last = self.last_typed.get(uri)
        self.last_typed[uri] = now
        debounce = self.options.debounce_ms / 1000
        paused = last is None or now - last >= debounce
        self.schedule(uri, 0 if paused and uri not in self.tasks else debounce)

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
            result = done
            self.show_config_problems()
            current = self.document(uri)
            if current is None or current.version != version:
                return  # a newer version is on its way; never publish stale results
            self.deliver(uri, result)
        except asyncio.CancelledError:
            pass
        except Exception:
            self.log_message(f"fabric-lsp: analysis of {uri} failed:\n{traceback.format_exc()}", types.MessageType.Error)
        finally:
            if self.tasks.get(uri) is asyncio.current_task():
                self.tasks.pop(uri, None)

    def config_for(self, path: str | None) -> Config:
        """pyproject.toml's [tool.fabric-lsp] for ``path``, with the editor's settings on top."""
        return self.configs.for_path(path or self.root).for_file(path)

    def client_layers(self) -> list[Layer]:
        env = self.workspace_model.environment_path if self.workspace_model else None
        return [{"environment-path": env} if env else {}, self.settings]

    def update_settings(self, raw, where: str) -> None:
        """The editor's latest settings replace its earlier ones (initializationOptions
        included) and every setting is rebuilt from the defaults, pyproject.toml and them: a key
        the editor no longer sends, or sends as null, is back to the file's value or its default.
        One message for every invalid value."""
        self.settings, problems = client_layer(raw, where)
        if problems:
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message="\n".join(problems)))
        old = (self.options.environment_path, self.options.effective_lightning_version)
        hints_before = self.options.inlay_hints
        self.options = Config.build(self.client_layers()[1:])
        if self.options.inlay_hints != hints_before:
            self.refresh_inlay_hints()
        if self.workspace_model is not None and (self.options.environment_path, self.options.effective_lightning_version) != old:
            self.setup_engine()
        self.configs.set_overrides(self.client_layers())

    def refresh_inlay_hints(self) -> None:
        """Ask the client to ask for inlay hints again (the ``inlayHints`` setting changed)."""
        if not self.supports_inlay_refresh:
            return
        try:
            self.workspace_inlay_hint_refresh(None)
        except Exception as exc:  # no client yet, or it went away
            self.log_message(f"fabric-lsp: workspace/inlayHint/refresh failed ({type(exc).__name__}: {exc})")

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
        self.request_refresh()  # the workspace report of files that are not open, too

    def _result_if_current(self, uri: str, version: int | None, text: str):
        """Worker thread: the findings, the line index and the LSP diagnostics of one version —
        everything but the sending, so the event loop stays free for the next keystroke."""
        analysis = self._analyze_if_current(uri, version, text)
        if analysis is None:
            return None
        result = Result(version, text, Lines(text), analysis.findings, analysis)
        result.diagnostics = [self.to_diagnostic(uri, result, i, f) for i, f in enumerate(result.findings)]
        return result

    def _analyze_if_current(self, uri: str, version: int | None, text: str) -> Analysis | None:
        """Runs in the worker thread: skip versions that a newer edit has already replaced, so
        that a burst of keystrokes queues no backlog of work."""
        doc = self.document(uri)
        if doc is None or doc.version != version:
            return None
        return self._analyze(uri, text)

    def _analyze(self, uri: str, text: str) -> Analysis:
        path = to_fs_path(uri) if uri.startswith("file:") else None
        model = self.workspace_model
        if model is None or self.analyzers is None:
            return Analysis(text, path)  # not initialized
        with model.recording() as lookups:
            analyzer, reused = None, 0
            try:
                config = self.config_for(path)
                if path and config.is_excluded(path, root=config.root or self.root):
                    return Analysis(text, path)
                analyzer = self.analyzers.for_config(config)
                reused = analyzer.stats["reused"]
                return self._analysis(analyzer, config, text, path)
            except RecursionError:
                self.log_message(f"fabric-lsp: {uri} is too deeply nested to analyse", types.MessageType.Warning)
                return Analysis(text, path)
            finally:  # verdicts reused from the last version made their lookups back then
                merge = analyzer is not None and analyzer.stats["reused"] != reused
                self.graph.record(uri, lookups.freeze(), merge=merge)

    @staticmethod
    def _analysis(analyzer: Analyzer, config: Config, text: str, path: str | None) -> Analysis:
        """The analysis of one file by its configuration's analyzer, findings as ``config`` gives them."""
        if path and batch_scripts.is_batch_script(path):  # the launched files' findings, on its lines
            return Analysis(text, path, findings=config.apply(batch_scripts.script_findings(analyzer, text, path)))
        analysis = analyzer.analysis(text, path)
        analysis.findings = config.apply(analysis.findings)
        return analysis

    def deliver(self, uri: str, result: Result) -> None:
        """Event loop: keep the result of the current version; push its diagnostics, or, to a
        client that pulls them, ask for a refresh when a dependency changed them."""
        previous = self.results.get(uri)
        # result ids matter to a client that pulls; a pushed client gets every version's list
        same = self.pull and previous is not None and previous.diagnostics == result.diagnostics
        result.result_id = previous.result_id if same and previous else self.new_result_id()
        self.results[uri] = result
        if not self.pull:
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=result.diagnostics, version=result.version)
            )
        elif previous is not None and previous.version == result.version and not same:
            self.request_refresh()  # same text, new diagnostics: a module it depends on changed

    def new_result_id(self) -> str:
        return str(next(self._result_ids))

    # -- changes of other modules --------------------------------------------------------------
    def module_changed(self, path: str, *, appeared_or_vanished: bool = False, delay: float | None = None) -> None:
        """A module changed (edited, saved, opened or closed in the editor, or changed, created
        or deleted on disk): forget what the workspace cached about it and re-analyse (after
        ``delay``, by default the debounce) the open documents whose last analysis looked it
        up, or looked for a module it may provide."""
        model = self.workspace_model
        if model is None:
            return
        model.invalidate(path, appeared_or_vanished=appeared_or_vanished)
        changed = from_fs_path(path)
        dependents = self.graph.dependents(path, appeared_or_vanished=appeared_or_vanished, text=model.text_of)
        dependents |= self._batch_dependents(path, appeared_or_vanished)
        dependents.discard(changed)
        open_docs = self.workspace.text_documents
        stale_on_disk = self.disk_reports.pop(changed, None) is not None
        for uri in dependents:
            if uri in open_docs:
                self.schedule(uri, delay)
            elif self.disk_reports.pop(uri, None) is not None:
                stale_on_disk = True
        if stale_on_disk or (appeared_or_vanished and self.disk_reports):
            self.request_refresh()  # the workspace report is out of date

    def _batch_dependents(self, path: str, appeared_or_vanished: bool) -> set[str]:
        """Batch-job scripts and the Python files they launch depend on each other (FAB010),
        outside the module graph: a changed script re-analyses the open Python documents, a
        changed Python file the open scripts."""
        if batch_scripts.is_batch_script(path):
            if appeared_or_vanished and self.root:
                batch_scripts.forget(self.root)
            return {uri for uri in self.open_uris() if uri.endswith(".py")}
        if path.endswith(".py"):
            return {uri for uri in self.open_uris() if batch_scripts.is_batch_script(uri)}
        return set()

    def request_refresh(self) -> None:
        """Ask a pulling client to pull again (debounced, at most one request in flight)."""
        if not (self.pull and self.supports_refresh):
            return
        if self._refresh_task is None or self._refresh_task.done():
            self._refresh_task = asyncio.get_running_loop().create_task(self._refresh_later())

    async def _refresh_later(self) -> None:
        await asyncio.sleep(self.options.debounce_ms / 1000)
        while any(not t.done() for t in self.tasks.values()):
            await asyncio.wait(list(self.tasks.values()))  # refresh once the re-analyses are done
        try:
            await asyncio.wait_for(self.workspace_diagnostic_refresh_async(None), 10)
        except Exception as exc:
            self.log_message(f"fabric-lsp: workspace/diagnostic/refresh failed ({type(exc).__name__}: {exc})")

    # -- pull diagnostics ----------------------------------------------------------------------
    async def settled_result(self, uri: str) -> Result | None:
        """The result of the document's current version once its pending analysis is done."""
        for _ in range(3):  # a version that fails to analyse gives no result: give up
            if uri not in self.workspace.text_documents:
                return None
            task = self.tasks.get(uri)
            if task is None:
                result = self.current_result(uri)
                if result is not None:
                    return result
                self.schedule(uri, delay=0)
                task = self.tasks[uri]
            await asyncio.wait({task})
        return self.current_result(uri)

    def disk_reports_for(self, paths: list[str]) -> list[tuple[str, DiskReport]]:
        """Worker thread: the reports of files that are not open, re-analysed when they
        changed on disk or a module they depend on changed (which drops their report)."""
        out = []
        for path in paths:
            uri = from_fs_path(path)
            report = self._disk_report(uri, path)
            if report is not None:
                out.append((uri, report))
        return out

    def _disk_report(self, uri: str, path: str) -> DiskReport | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        stamp = (st.st_mtime_ns, st.st_size)
        settings = (self.config_for(path), self.options)
        previous = self.disk_reports.get(uri)
        if previous is not None and previous.stamp == stamp and previous.settings == settings:
            return previous
        text = self.workspace_model.text_of(path) if self.workspace_model else None
        if text is None:
            return None
        findings = self._analyze(uri, text).findings
        result = Result(None, text, Lines(text), findings)
        diagnostics = [self.to_diagnostic(uri, result, i, f) for i, f in enumerate(findings)]
        same = previous is not None and previous.diagnostics == diagnostics
        report = DiskReport(stamp, settings, previous.result_id if same and previous else self.new_result_id(), diagnostics)
        self.disk_reports[uri] = report
        return report

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
    def workspace_edit(self, uri: str, version: int | None, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
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
        fix_edits = f.fix.edits if f.fix is not None else ()
        edits = [types.TextEdit(self.encoder.range_to_lsp(result.lines, e.span), e.new_text) for e in fix_edits]
        return self.workspace_edit(uri, result.version, edits)

    def noqa_edit(self, uri: str, result: Result, f: Finding) -> types.WorkspaceEdit:
        line = f.span.end.line
        edit = noqa.line_edit(result.lines.content(line), {f.code})
        if edit is None:  # a bare noqa comment silences it already
            return self.workspace_edit(uri, result.version, [])
        start, end, new = edit
        span = Span(Pos(line, start), Pos(line, end))
        return self.workspace_edit(uri, result.version, [types.TextEdit(self.encoder.range_to_lsp(result.lines, span), new)])

    async def analysis_of(self, uri: str) -> tuple[Analysis, Lines]:
        """The analysis of the document's current version (and its line index): the one its
        diagnostics came from, else computed now (they are still being computed)."""
        result = self.current_result(uri)
        if result is not None and result.analysis is not None:
            return result.analysis, result.lines
        doc = self.document(uri)
        text = doc.source if doc is not None else ""
        analysis = await asyncio.get_running_loop().run_in_executor(self.executor, self._analyze, uri, text)
        return analysis, Lines(text)

    async def inlay_hints(self, uri: str, rng: types.Range) -> list[types.InlayHint]:
        """The configuration of every ``Fabric(...)`` in ``rng`` (not in notebook cells; none when
        the ``inlayHints`` setting is off)."""
        if not self.options.inlay_hints or self.document(uri) is None or self.analyzers is None:
            return []
        if notebook_server.notebook_uri_of(self, uri) is not None:
            return []
        # the pending analysis of this version (hints are asked after every edit: never a second one)
        result = await self.settled_result(uri)
        if result is None or result.analysis is None:
            return []
        analysis, lines = result.analysis, result.lines
        span = self.encoder.range_from_lsp(lines, rng)
        return [
            types.InlayHint(
                position=self.encoder.to_lsp(lines, h.pos),
                label=h.label,
                tooltip=types.MarkupContent(kind=types.MarkupKind.Markdown, value=h.tooltip),
                padding_left=True,
            )
            for h in analysis.hints()
            if span.start <= h.pos <= span.end
        ]

    def current_result(self, uri: str) -> Result | None:
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
    registration = types.Registration(id="fabric-lsp-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options)
    try:
        await asyncio.wait_for(ls.client_register_capability_async(types.RegistrationParams(registrations=[registration])), 10)
    except Exception as exc:
        ls.log_message(f"fabric-lsp: could not watch files ({type(exc).__name__}: {exc})", types.MessageType.Warning)


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
async def did_change_watched_files(ls: FabricLanguageServer, params: types.DidChangeWatchedFilesParams) -> None:
    if any(change.uri.endswith("/" + PYPROJECT) for change in params.changes):
        ls.reload_config()
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
            answer = await asyncio.wait_for(ls.workspace_configuration_async(types.ConfigurationParams(items=[item])), 10)
            settings = answer[0] if answer else None
        except Exception as exc:
            ls.log_message(f"fabric-lsp: workspace/configuration failed ({type(exc).__name__}: {exc})", types.MessageType.Warning)
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


async def document_diagnostic(ls: FabricLanguageServer, params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
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


async def workspace_diagnostic(ls: FabricLanguageServer, params: types.WorkspaceDiagnosticParams) -> types.WorkspaceDiagnosticReport:
    """Every Python file of the project (open documents at their current version), with
    ``$/progress`` when the client gave a token; unchanged files as unchanged reports."""
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
    for start in range(0, len(on_disk), WORKSPACE_BATCH):
        batch = on_disk[start : start + WORKSPACE_BATCH]
        for uri, report in await loop.run_in_executor(ls.executor, ls.disk_reports_for, batch):
            items.append(_workspace_item(uri, None, report.result_id, report.diagnostics, previous))
        progress.advance(len(batch))
    progress.end()
    return types.WorkspaceDiagnosticReport(items=items)


def _workspace_item(uri: str, version: int | None, result_id: str, items: list[types.Diagnostic], previous: dict[str, str]):
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
    elif only and _wanted(only, FIX_ALL_KIND) and any(f.fix and f.fix.applicability is Applicability.SAFE for f in result.findings):
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


def run(tcp: tuple[str, int] | None = None, log_file: str | None = None) -> int:
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
