"""The language server's session: its settings, the analyzers over one workspace, the results of
the open documents (analysed in a worker thread, debounced per document or notebook), the
diagnostics, edits and reports made of them. The handlers (:mod:`fabric_lsp.lsp.server`) call it."""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import sys
import threading
import traceback
from collections.abc import Awaitable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import TextDocument

from fabric_lsp import __version__, declared_version
from fabric_lsp.config import PYPROJECT, Config, Layer, Resolver, client_layer, client_layers
from fabric_lsp.documents import check
from fabric_lsp.documents.analyzers import Analyzers
from fabric_lsp.documents.cache import Cache, World, cache_directory, file_key
from fabric_lsp.documents.workers import Job, Workers, cores, module_job, prestart
from fabric_lsp.engine.analyzer import Analysis, Analyzer
from fabric_lsp.engine.findings import Finding, Pos, Severity, Span
from fabric_lsp.engine.program import batch_scripts
from fabric_lsp.engine.python import noqa
from fabric_lsp.engine.python.text import Lines
from fabric_lsp.engine.workspace.dependencies import Dependencies, DependencyGraph
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.lsp import notebooks as notebook_server
from fabric_lsp.lsp.head_start import HeadStart
from fabric_lsp.lsp.positions import Encoder
from fabric_lsp.lsp.results import DiskReport, Result

SOURCE = "fabric-lsp"
log = logging.getLogger("fabric_lsp")
_DIAGNOSTIC_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFORMATION: types.DiagnosticSeverity.Information,
    Severity.HINT: types.DiagnosticSeverity.Hint,
}


class FabricProtocol(LanguageServerProtocol):
    """pygls' protocol, but a request whose params do not fit its method gets the JSON-RPC error
    response it is owed (-32602) instead of only a message to the user."""

    def structure_message(self, data):
        try:
            return super().structure_message(data)
        except (JsonRpcInvalidParams, JsonRpcInternalError) as exc:
            if isinstance(data, dict) and "id" in data and "method" in data:
                method = str(data.get("method"))
                self._send_response(
                    data["id"], error=types.ResponseError(code=exc.CODE, message=f"{exc.MESSAGE} for {method}")
                )
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
        self.disk_cache: Cache | None = None  # ... and the persistent cache behind them,
        self.disk_cache_live = False  # used while one report is made (the project read afresh)
        self.disk_workers: Workers | None = None  # ... and the processes analysing its modules
        #: what ``fabric-lsp serve`` started before the protocol, for the first workspace report
        self.head_start: HeadStart | None = None
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
        self.configs.project_root = self.root  # the project's requirements are read there
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
        """Analyse the document ``uri`` (a cell: its whole notebook) after ``delay``, by default
        the debounce."""
        notebook_uri = notebook_server.notebook_uri_of(self, uri)
        if notebook_uri is not None:
            self.run_later(notebook_uri, lambda: notebook_server.analyze(self, notebook_uri), delay)
        else:
            self.run_later(uri, lambda: self._analyze_document(uri), delay)

    def run_later(self, key: str, job: Callable[[], Awaitable[None]], delay: float | None = None) -> None:
        """One pending analysis per document or notebook: a new one replaces the one waiting."""
        old = self.tasks.pop(key, None)
        if old is not None:
            old.cancel()
        delay = self.options.debounce_ms / 1000 if delay is None else delay
        self.tasks[key] = asyncio.get_running_loop().create_task(self._later(key, job, delay))

    async def _later(self, key: str, job: Callable[[], Awaitable[None]], delay: float) -> None:
        try:
            if delay > 0:
                await asyncio.sleep(delay)
            await job()
        except asyncio.CancelledError:
            pass
        except Exception:
            self.log_message(
                f"fabric-lsp: analysis of {key} failed:\n{traceback.format_exc()}", types.MessageType.Error
            )
        finally:
            if self.tasks.get(key) is asyncio.current_task():
                self.tasks.pop(key, None)

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

    async def _analyze_document(self, uri: str) -> None:
        doc = self.document(uri)
        if doc is None:
            return
        version, text = doc.version, doc.source
        loop = asyncio.get_running_loop()
        self.loop = loop
        result = await loop.run_in_executor(self.executor, self._result_if_current, uri, version, text)
        if result is None:
            return  # superseded before the worker got to it
        self.show_config_problems()
        current = self.document(uri)
        if current is None or current.version != version:
            return  # a newer version is on its way; never publish stale results
        self.deliver(uri, result)

    def config_for(self, path: str | None) -> Config:
        """pyproject.toml's [tool.fabric-lsp] for ``path``, with the editor's settings on top."""
        return self.configs.for_path(path or self.root).for_file(path)

    def client_layers(self) -> list[Layer]:
        env = self.workspace_model.environment_path if self.workspace_model else None
        return client_layers(env, self.settings)

    def update_settings(self, raw, where: str) -> None:
        """The editor's latest settings replace its earlier ones (initializationOptions
        included) and every setting is rebuilt from the defaults, pyproject.toml and them: a key
        the editor no longer sends, or sends as null, is back to the file's value or its default.
        One message for every invalid value."""
        self.settings, problems = client_layer(raw, where)
        if problems:
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message="\n".join(problems))
            )
        old = (self.options.environment_path, self.options.effective_lightning_version)
        hints_before = self.options.inlay_hints
        self.options = Config.build(self.client_layers()[1:], project_root=self.root)
        if self.options.inlay_hints != hints_before:
            self.refresh_inlay_hints()
        if (
            self.workspace_model is not None
            and (self.options.environment_path, self.options.effective_lightning_version) != old
        ):
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
        """pyproject.toml (or a requirements file) changed: re-read it (by its new mtime) and
        re-publish every document."""
        declared_version.forget()
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
        return self.analyze(uri, text)

    def analyze(self, uri: str, text: str) -> Analysis:
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
        return check.analysis(analyzer, config, text, path)

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

    def _stamp(self, uri: str, path: str) -> tuple[tuple[int, int], tuple] | None:
        """The file's stamp and settings, or None where its report is still right (or it is gone)."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        stamp = (st.st_mtime_ns, st.st_size)
        settings = (self.config_for(path), self.options)
        previous = self.disk_reports.get(uri)
        if previous is not None and previous.stamp == stamp and previous.settings == settings:
            return None
        return stamp, settings

    def _disk_report(self, uri: str, path: str) -> DiskReport | None:
        changed = self._stamp(uri, path)
        if changed is None:
            return self.disk_reports.get(uri)
        stamp, settings = changed
        previous = self.disk_reports.get(uri)
        text = self.workspace_model.text_of(path) if self.workspace_model else None
        if text is None:
            return None
        findings = self._disk_findings(uri, path, text)
        diagnostics = self._disk_diagnostics(uri, text, findings)
        same = previous is not None and previous.diagnostics == diagnostics
        report = DiskReport(
            stamp, settings, previous.result_id if same and previous else self.new_result_id(), diagnostics
        )
        self.disk_reports[uri] = report
        return report

    def _disk_diagnostics(self, uri: str, text: str, findings: list[Finding]) -> list[types.Diagnostic]:
        if not findings:  # most files: their lines are never read
            return []
        result = Result(None, text, Lines(text), findings)
        return [self.to_diagnostic(uri, result, i, f) for i, f in enumerate(findings)]

    def _disk_findings(self, uri: str, path: str, text: str) -> list[Finding]:
        """The findings of a file that is not open: from the persistent cache that
        ``fabric-lsp check`` keeps too (``documents/cache.py``) when nothing it looked up changed
        — and no open document is among what it looked up: the cache knows only files on disk."""
        config = self.config_for(path)
        key = file_key(text, config)
        cache = self.disk_cache if self.disk_cache_live else None
        cached = self._cached_findings(path, key)
        if cached is not None:
            return cached
        done = self.disk_workers.result(path, text) if self.disk_workers is not None else None
        deps: Dependencies | None
        if done is not None and not self._reads_open_documents(done.deps):
            findings, deps = list(done.findings), done.deps
            self.graph.record(uri, done.deps)
            if cache is not None:
                cache.world.answered(done.mentioned)  # a worker's answers, read from disk as the cache's
        else:
            findings, deps = self.analyze(uri, text).findings, self.graph.get(uri)
        if cache is not None and deps is not None and not self._reads_open_documents(deps):
            cache.put(path, key, deps, findings, (), True)
        return findings

    def _cached_findings(self, path: str, key: str) -> list[Finding] | None:
        """The file's findings from the persistent cache, where nothing they depend on changed."""
        cache = self._usable_cache(path)
        entry = cache.get(path, key) if cache is not None else None
        return None if entry is None else list(entry.findings)

    def _usable_cache(self, path: str) -> Cache | None:
        """The persistent cache, while a report is made, if its entry of ``path`` read no open document."""
        cache = self.disk_cache if self.disk_cache_live else None
        known = cache.entries.get(path) if cache is not None else None
        return None if cache is None or known is None or self._reads_open_documents(known.deps) else cache

    def submit_disk_analyses(self, paths: list[str], head: HeadStart | None = None) -> list[tuple[Future, list[str]]]:
        """Worker thread, before the reports of files that are not open: the modules among them to
        be analysed afresh (changed, not in the cache, kept by a rule's prefilter) go to worker
        processes at once (those of ``head``, where they analyse this project); returns each unit
        of work handed out and the paths it holds (none when too few are worth the workers), whose
        reports take their results in turn."""
        jobs = [job for job in map(self._disk_job, paths) if job is not None]
        workers = self._head_workers(head) or Workers(self.root, self.options.environment_path, self.log_message)
        workers.submit(jobs, cores())
        self.disk_workers = workers
        return workers.chunks()

    def _head_workers(self, head: HeadStart | None) -> Workers | None:
        if head is None:
            return None
        for message in head.logged:
            self.log_message(message)
        return head.take_workers(self.root, self.options.environment_path, self.log_message)

    def prestart_workers(self) -> None:
        """Start what the worker processes of a cold ``workspace/diagnostic`` start from (the fork
        server), so that it has imported the engine by the time the client asks."""
        if cores() < 2:
            return
        try:
            prestart()
        except OSError as exc:
            self.log_message(f"fabric-lsp: could not start the worker processes' fork server ({exc})")

    def _disk_job(self, path: str) -> Job | None:
        model = self.workspace_model
        if (
            model is None
            or self.analyzers is None
            or check.kind_of(path) is not check.Kind.MODULE
            or self._stamp(from_fs_path(path), path) is None
        ):
            return None
        return module_job(path, model.text_of(path), self.config_for(path), self.root, self._usable_cache(path))

    def _reads_open_documents(self, deps: Dependencies) -> bool:
        open_paths = {to_fs_path(uri) for uri in self.open_uris() if uri.startswith("file:")}
        return not open_paths.isdisjoint(deps.paths) or bool(deps.listings and open_paths)

    def claim_head_start(self) -> HeadStart | None:
        """Event loop, at a ``workspace/diagnostic``: the head start, for this report only."""
        head, self.head_start = self.head_start, None
        return head

    def drop_head_start(self) -> None:
        """Event loop: a head start no workspace report took (its workers stop)."""
        if self.head_start is not None:
            self.head_start.drop()
            self.head_start = None

    def start_disk_reports(self, head: HeadStart | None = None) -> None:
        """Worker thread, before a ``workspace/diagnostic`` report: the cache (the one ``head``
        read, where it is this one), with the project read afresh."""
        if self.disk_cache is None and self.root:
            place = (
                cache_directory(self.configs.for_path(self.root), self.root),
                self.root,
                self.options.environment_path,
            )
            self.disk_cache = (head.cache_at(*place) if head is not None else None) or Cache(*place)
        if self.disk_cache is not None:
            old = self.disk_cache.world  # its answers about words are reused where the files are unchanged
            self.disk_cache.world = World(old.root, known=old.remembered() or old.known)
            self.disk_cache_live = True

    def end_disk_reports(self) -> None:
        if self.disk_workers is not None:
            self.disk_workers.close()
            self.disk_workers = None
        if self.disk_cache is not None and self.disk_cache_live:
            self.disk_cache.save()
            self.log_message(f"fabric-lsp: workspace diagnostics: {self.disk_cache.hits} files from the cache")
            self.disk_cache.hits = 0
        self.disk_cache_live = False

    def to_diagnostic(self, uri: str, result: Result, index: int, f: Finding) -> types.Diagnostic:
        related = []
        for r in f.related:
            if r.path is None:
                related.append(
                    types.DiagnosticRelatedInformation(
                        types.Location(uri, self.encoder.range_to_lsp(result.lines, r.span)), r.message
                    )
                )
            else:
                module = self.workspace_model.load_path(r.path) if self.workspace_model else None
                if module is not None:
                    related.append(
                        types.DiagnosticRelatedInformation(
                            types.Location(from_fs_path(r.path), self.encoder.range_to_lsp(module.lines, r.span)),
                            r.message,
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
        return self.workspace_edit(
            uri, result.version, [types.TextEdit(self.encoder.range_to_lsp(result.lines, span), new)]
        )

    async def analysis_of(self, uri: str) -> tuple[Analysis, Lines]:
        """The analysis of the document's current version (and its line index): the one its
        diagnostics came from, else computed now (they are still being computed)."""
        result = self.current_result(uri)
        if result is not None and result.analysis is not None:
            return result.analysis, result.lines
        doc = self.document(uri)
        text = doc.source if doc is not None else ""
        analysis = await asyncio.get_running_loop().run_in_executor(self.executor, self.analyze, uri, text)
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
