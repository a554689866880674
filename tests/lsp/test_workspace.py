"""The workspace-aware server, against the real server process: open documents follow the
modules they import (unsaved edits, saves, closes, files changed/created/deleted on disk), pull
diagnostics for clients that support them, and the severity the server publishes."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pytest
import pytest_asyncio
from fabric_lsp.declared_version import DECLARATION_GLOBS
from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import to_fs_path

TIMEOUT = 30

TRAIN = """\
from lightning.fabric import Fabric
from {module} import STRATEGY

fabric = Fabric(strategy=STRATEGY)
fabric.launch()
model = fabric.setup_module(model)
optimizer = fabric.setup_optimizers(optimizer)
"""


def config_text(strategy: str) -> str:
    return f'STRATEGY = "{strategy}"\n'


class Session:
    """A pygls client on ``python -m fabric_lsp`` that records what the server sends."""

    def __init__(self) -> None:
        self.client = LanguageClient("workspace-tests", "1")
        self.published: dict[str, list[tuple[Any, list[types.Diagnostic]]]] = {}
        self.registrations: list[types.Registration] = []
        self.refreshes = 0
        self.progress: list[types.ProgressParams] = []
        self.versions: dict[str, int] = {}

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: types.PublishDiagnosticsParams) -> None:
            self.published.setdefault(params.uri, []).append((params.version, list(params.diagnostics)))

        @self.client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def on_register(params: types.RegistrationParams) -> None:
            self.registrations.extend(params.registrations)

        @self.client.feature(types.WORKSPACE_DIAGNOSTIC_REFRESH)
        def on_refresh(params: None) -> None:
            self.refreshes += 1

        @self.client.feature(types.PROGRESS)
        def on_progress(params: types.ProgressParams) -> None:
            self.progress.append(params)

        self.logs: list[str] = []

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def on_log(params: types.LogMessageParams) -> None:
            self.logs.append(params.message)

    async def start(self, root: Path, *, pull: bool = False, options: dict | None = None) -> types.InitializeResult:
        await self.client.start_io(sys.executable, "-m", "fabric_lsp")
        text_document = types.TextDocumentClientCapabilities(
            diagnostic=types.DiagnosticClientCapabilities(related_document_support=True) if pull else None,
        )
        workspace = types.WorkspaceClientCapabilities(
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True),
            diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True) if pull else None,
        )
        caps = types.ClientCapabilities(
            text_document=text_document,
            workspace=workspace,
            window=types.WindowClientCapabilities(work_done_progress=True),
        )
        init = types.InitializeParams(
            capabilities=caps, root_uri=root.as_uri(), initialization_options=options or {"debounceMs": 0}
        )
        result = await asyncio.wait_for(self.client.initialize_async(init), TIMEOUT)
        self.client.initialized(types.InitializedParams())
        return result

    async def stop(self) -> None:
        await asyncio.wait_for(self.client.shutdown_async(None), TIMEOUT)
        self.client.exit(None)
        await asyncio.wait_for(self.client.stop(), TIMEOUT)

    # -- documents -----------------------------------------------------------------------------
    def open(self, path: Path, text: str | None = None) -> str:
        uri = path.as_uri()
        self.versions[uri] = 1
        item = types.TextDocumentItem(
            uri=uri, language_id="python", version=1, text=path.read_text() if text is None else text
        )
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(item))
        return uri

    def change(self, uri: str, text: str) -> None:
        self.versions[uri] += 1
        doc = types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri])
        change = types.TextDocumentContentChangeWholeDocument(text=text)
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(doc, [change]))

    def save(self, uri: str) -> None:
        self.client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))

    def close(self, uri: str) -> None:
        self.client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))

    def files_changed(self, *changes: tuple[Path, types.FileChangeType]) -> None:
        events = [types.FileEvent(uri=path.as_uri(), type=kind) for path, kind in changes]
        self.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=events))

    def progress_kinds(self, token: str) -> list[str]:
        return [p.value["kind"] for p in self.progress if p.token == token]  # values arrive as JSON

    # -- waiting -------------------------------------------------------------------------------
    def count(self, uri: str) -> int:
        return len(self.published.get(uri, []))

    async def publish_after(self, uri: str, seen: int) -> list[types.Diagnostic]:
        """The diagnostics of the first publish for ``uri`` after the ``seen`` first ones."""
        await until(lambda: self.count(uri) > seen)
        return self.published[uri][seen][1]

    async def codes_become(self, uri: str, codes: list[str]) -> None:
        """Wait until the latest publish for ``uri`` has exactly these codes."""
        await until(lambda: bool(self.published.get(uri)) and [d.code for d in self.published[uri][-1][1]] == codes)


async def until(predicate: Callable[[], bool], timeout: float = TIMEOUT) -> None:
    async def poll() -> None:
        while not predicate():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), timeout)


@pytest_asyncio.fixture
async def session():
    s = Session()
    yield s
    await s.stop()


def project(root: Path, *, module: str = "config", strategy: str | None = "ddp") -> tuple[Path, Path]:
    train = root / "train.py"
    train.write_text(TRAIN.format(module=module))
    config = root / f"{module}.py"
    if strategy is not None:
        config.write_text(config_text(strategy))
    return train, config


@pytest.mark.asyncio
async def test_unsaved_edit_save_and_close_of_an_imported_module_refresh_the_importer(session: Session, tmp_path: Path):
    train, config = project(tmp_path)
    result = await session.start(tmp_path)
    assert result.capabilities.diagnostic_provider is None  # this client does not pull: it is pushed to
    config_uri = session.open(config)
    await session.publish_after(config_uri, 0)
    train_uri = session.open(train)
    assert await session.publish_after(train_uri, 0) == []

    # an unsaved edit of config.py: the disk still says "ddp", the buffer wins
    seen = session.count(train_uri)
    session.change(config_uri, config_text("deepspeed"))
    diags = await session.publish_after(train_uri, seen)
    assert [d.code for d in diags] == ["FAB001"]
    assert diags[0].severity == types.DiagnosticSeverity.Error
    assert config.read_text() == config_text("ddp")

    # saved: the importer is analysed again (and stays right)
    config.write_text(config_text("deepspeed"))
    seen = session.count(train_uri)
    session.save(config_uri)
    assert [d.code for d in await session.publish_after(train_uri, seen)] == ["FAB001"]

    # edited back to "ddp" and closed without saving: the disk's "deepspeed" wins again
    session.change(config_uri, config_text("ddp"))
    await session.codes_become(train_uri, [])
    seen = session.count(train_uri)
    session.close(config_uri)
    assert [d.code for d in await session.publish_after(train_uri, seen)] == ["FAB001"]


@pytest.mark.asyncio
async def test_files_changed_created_and_deleted_on_disk(session: Session, tmp_path: Path):
    train, settings = project(tmp_path, module="settings", strategy=None)
    await session.start(tmp_path)
    await until(lambda: bool(session.registrations))
    [registration] = session.registrations
    assert registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    globs = {w["globPattern"] for w in registration.register_options["watchers"]}  # arrives as JSON
    assert globs == {"**/*.py", "**/pyproject.toml", "**/*.sh", "**/*.sbatch", "**/*.slurm", *DECLARATION_GLOBS}
    assert {"**/requirements*.txt", "**/setup.cfg", "**/environment*.yml"} <= globs  # the declared Lightning version

    train_uri = session.open(train)
    assert await session.publish_after(train_uri, 0) == []  # settings.py does not exist yet

    settings.write_text(config_text("deepspeed"))  # created after start-up: now it resolves
    session.files_changed((settings, types.FileChangeType.Created))
    await session.codes_become(train_uri, ["FAB001"])

    settings.write_text(config_text("ddp"))
    session.files_changed((settings, types.FileChangeType.Changed))
    await session.codes_become(train_uri, [])

    settings.write_text(config_text("deepspeed_stage_3"))
    session.files_changed((settings, types.FileChangeType.Changed))
    await session.codes_become(train_uri, ["FAB001"])

    settings.unlink()
    session.files_changed((settings, types.FileChangeType.Deleted))
    await session.codes_become(train_uri, [])


@pytest.mark.asyncio
async def test_a_new_unsaved_buffer_provides_a_missing_module(session: Session, tmp_path: Path):
    train, settings = project(tmp_path, module="settings", strategy=None)
    await session.start(tmp_path)
    train_uri = session.open(train)
    assert await session.publish_after(train_uri, 0) == []
    session.open(settings, text=config_text("deepspeed"))  # never saved to disk
    await session.codes_become(train_uri, ["FAB001"])
    session.close(settings.as_uri())
    await session.codes_become(train_uri, [])


@pytest.mark.asyncio
async def test_unknown_strategy_hint_is_published_as_a_hint(session: Session, tmp_path: Path):
    path = tmp_path / "unknown.py"
    path.write_text(
        "import sys\nfrom lightning.fabric import Fabric\n\nfabric = Fabric(strategy=sys.argv[1])\n"
        "model = fabric.setup_module(model)\noptimizer = fabric.setup_optimizers(optimizer)\n"
    )
    await session.start(tmp_path, options={"debounceMs": 0, "reportUnknown": True})
    uri = session.open(path)
    [diag] = await session.publish_after(uri, 0)
    assert diag.code == "FAB001"
    assert diag.severity == types.DiagnosticSeverity.Hint


@pytest.mark.asyncio
async def test_pull_diagnostics_document_and_workspace(session: Session, tmp_path: Path):
    train, config = project(tmp_path, strategy="deepspeed")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    other = tmp_path / "pkg" / "other.py"
    other.write_text(TRAIN.format(module="config"))
    result = await session.start(tmp_path, pull=True)
    provider = result.capabilities.diagnostic_provider
    assert provider is not None and provider.inter_file_dependencies and provider.workspace_diagnostics

    train_uri = session.open(train)
    config_uri = session.open(config)
    pull = session.client.text_document_diagnostic_async
    report = await asyncio.wait_for(
        pull(types.DocumentDiagnosticParams(types.TextDocumentIdentifier(train_uri))), TIMEOUT
    )
    assert report.kind == "full" and [d.code for d in report.items] == ["FAB001"]
    again = await asyncio.wait_for(
        pull(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(train_uri), previous_result_id=report.result_id)
        ),
        TIMEOUT,
    )
    assert again.kind == "unchanged" and again.result_id == report.result_id

    # the workspace: every Python file, with progress on the client's token
    token = "fabric-lsp-test-token"
    params = types.WorkspaceDiagnosticParams(previous_result_ids=[], work_done_token=token)
    workspace = await asyncio.wait_for(session.client.workspace_diagnostic_async(params), TIMEOUT)
    by_uri = {item.uri: item for item in workspace.items}
    assert set(by_uri) == {train_uri, config_uri, other.as_uri(), (tmp_path / "pkg" / "__init__.py").as_uri()}
    assert [d.code for d in by_uri[other.as_uri()].items] == ["FAB001"]
    assert by_uri[train_uri].version == 1
    await until(lambda: "end" in session.progress_kinds(token))
    kinds = session.progress_kinds(token)
    assert kinds[0] == "begin" and kinds[-1] == "end" and "report" in kinds

    previous = [types.PreviousResultId(uri=item.uri, value=item.result_id) for item in workspace.items]
    params = types.WorkspaceDiagnosticParams(previous_result_ids=previous)
    unchanged = await asyncio.wait_for(session.client.workspace_diagnostic_async(params), TIMEOUT)
    assert {item.kind for item in unchanged.items} == {"unchanged"}

    # an unsaved edit of config.py: the server asks the client to pull again, and the pulls change
    session.change(config_uri, config_text("ddp"))
    await until(lambda: session.refreshes > 0)
    report = await asyncio.wait_for(
        pull(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(train_uri), previous_result_id=report.result_id)
        ),
        TIMEOUT,
    )
    assert report.kind == "full" and list(report.items) == []
    params = types.WorkspaceDiagnosticParams(previous_result_ids=previous)
    workspace = await asyncio.wait_for(session.client.workspace_diagnostic_async(params), TIMEOUT)
    assert list({item.uri: item.items for item in workspace.items if item.kind == "full"}[other.as_uri()]) == []
    assert session.published == {}  # a pulling client is never pushed to


@pytest.mark.asyncio
async def test_a_cold_workspace_report_analyses_its_modules_in_worker_processes_but_never_past_an_unsaved_buffer(
    session: Session, tmp_path: Path
):
    """Enough modules to analyse go to worker processes (which read the files on disk); a module
    whose analysis read an open document's unsaved buffer is analysed again by the server."""
    train, config = project(tmp_path, strategy="deepspeed")
    (tmp_path / "ddp_config.py").write_text(config_text("ddp"))
    for i in range(15):  # FAB001 through config.py (deepspeed on disk, ddp in the editor)
        (tmp_path / f"train_{i}.py").write_text(TRAIN.format(module="config"))
    for i in range(15):  # FAB001 nowhere: ddp on disk, nothing open
        (tmp_path / f"ddp_{i}.py").write_text(TRAIN.format(module="ddp_config"))
    (tmp_path / "deepspeed_0.py").write_text(TRAIN.format(module="config").replace("STRATEGY)", '"deepspeed")'))
    await session.start(tmp_path, pull=True)
    session.open(config, config_text("ddp"))  # unsaved: the workers cannot see it
    params = types.WorkspaceDiagnosticParams(previous_result_ids=[])
    report = await asyncio.wait_for(session.client.workspace_diagnostic_async(params), TIMEOUT * 2)
    codes = {Path(to_fs_path(item.uri)).name: [d.code for d in item.items] for item in report.items}
    assert codes["deepspeed_0.py"] == ["FAB001"]
    assert {codes[f"train_{i}.py"] == [] for i in range(15)} == {True}, codes
    assert {codes[f"ddp_{i}.py"] == [] for i in range(15)} == {True}, codes
    assert any(m.startswith("fabric-lsp: analysing 32 modules in 2 worker processes") for m in session.logs), (
        session.logs
    )


def many_modules(root: Path) -> None:
    project(root, strategy="deepspeed")
    for i in range(30):
        (root / f"train_{i}.py").write_text(TRAIN.format(module="config"))
    (root / "ddp_0.py").write_text(TRAIN.format(module="config").replace("STRATEGY)", '"ddp")'))


def codes_of(report: types.WorkspaceDiagnosticReport) -> dict[str, list]:
    return {Path(to_fs_path(item.uri)).name: sorted(str(d.code) for d in item.items) for item in report.items}


@pytest.mark.asyncio
async def test_the_workers_start_before_the_protocol_and_give_the_findings_of_the_command_line(
    session: Session, tmp_path: Path
):
    """The server reads the client's ``initialize`` before it imports the protocol and hands the
    project's modules to the worker processes at once (a head start): the workspace report takes
    their work, and its findings are the command line's."""
    many_modules(tmp_path)
    await session.start(tmp_path, pull=True)
    params = types.WorkspaceDiagnosticParams(previous_result_ids=[])
    report = await asyncio.wait_for(session.client.workspace_diagnostic_async(params), TIMEOUT * 2)
    assert "fabric-lsp: 32 modules under way since the server started, 0 more" in session.logs, session.logs
    check = subprocess.run(
        [sys.executable, "-m", "fabric_lsp", "check", ".", "--format", "json", "--exit-zero", "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    by_file: dict[str, list] = {}
    for row in json.loads(check.stdout):
        by_file.setdefault(Path(row["filename"]).name, []).append(row["code"])
    codes = codes_of(report)
    assert codes == {path.name: sorted(by_file.get(path.name, [])) for path in tmp_path.glob("*.py")}
    assert codes["train_0.py"] == ["FAB001"] and codes["ddp_0.py"] == []


@pytest.mark.asyncio
async def test_a_module_opened_before_the_report_is_reported_once_as_the_open_document(
    session: Session, tmp_path: Path
):
    """The head start's workers analysed ``train_0.py`` from disk; opened (unsaved) before the
    report, it is reported once, as the editor holds it, and the workers' analysis is not used."""
    many_modules(tmp_path)
    await session.start(tmp_path, pull=True)
    uri = session.open(tmp_path / "train_0.py", TRAIN.format(module="config").replace("STRATEGY)", '"ddp")'))
    params = types.WorkspaceDiagnosticParams(previous_result_ids=[])
    report = await asyncio.wait_for(session.client.workspace_diagnostic_async(params), TIMEOUT * 2)
    assert [item.uri for item in report.items].count(uri) == 1
    assert codes_of(report)["train_0.py"] == [] and codes_of(report)["train_1.py"] == ["FAB001"]
    assert "fabric-lsp: 31 modules under way since the server started, 0 more" in session.logs, session.logs


@pytest.mark.asyncio
async def test_settings_changed_before_the_report_drop_the_head_start_work(session: Session, tmp_path: Path):
    """Settings the client sends after ``initialize`` change the modules' configuration: the
    workers' jobs made under the first settings are not used, and the report follows the new ones."""
    many_modules(tmp_path)
    await session.start(tmp_path, pull=True)
    session.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"fabric-lsp": {"debounceMs": 0, "ignore": ["FAB001"]}})
    )
    params = types.WorkspaceDiagnosticParams(previous_result_ids=[])
    report = await asyncio.wait_for(session.client.workspace_diagnostic_async(params), TIMEOUT * 2)
    assert {code for codes in codes_of(report).values() for code in codes} == set()
    assert not any(m.startswith("fabric-lsp: 32 modules under way") for m in session.logs), session.logs


@pytest.mark.asyncio
async def test_importer_still_follows_its_module_after_an_edit_that_reuses_its_verdicts(
    session: Session, tmp_path: Path
):
    """An edit elsewhere in train.py reuses the verdict of the setup site (incremental analysis)
    without repeating its lookups: train.py must still depend on config.py afterwards."""
    config = tmp_path / "config.py"
    config.write_text(config_text("ddp"))
    train = tmp_path / "train.py"
    text = (
        "from lightning.fabric import Fabric\nfrom config import STRATEGY\n\n\n"
        "def main(model, optimizer):\n    fabric = Fabric(strategy=STRATEGY)\n    fabric.launch()\n"
        "    model = fabric.setup_module(model)\n    optimizer = fabric.setup_optimizers(optimizer)\n\n\n"
        "def helper():\n    return {}\n"
    )
    train.write_text(text.format(1))
    await session.start(tmp_path)
    config_uri = session.open(config)
    await session.publish_after(config_uri, 0)
    train_uri = session.open(train)
    assert await session.publish_after(train_uri, 0) == []
    for n in (2, 3):  # edits of helper(): the verdict in main() is reused
        seen = session.count(train_uri)
        session.change(train_uri, text.format(n))
        assert await session.publish_after(train_uri, seen) == []
    session.change(config_uri, config_text("deepspeed"))
    await session.codes_become(train_uri, ["FAB001"])


SBATCH = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node={n}\nsrun python train.py\n"
TRAIN_8 = 'from lightning.fabric import Fabric\n\nfabric = Fabric(accelerator="cuda", devices=8, num_nodes=2)\nfabric.launch()\n'


@pytest.mark.asyncio
async def test_batch_script_and_the_file_it_launches_follow_each_other(session: Session, tmp_path: Path):
    """FAB010: the Python file reports at `devices=`, the open batch script on its line; an
    unsaved edit of the script that makes them agree clears both."""
    script, train = tmp_path / "job.sbatch", tmp_path / "train.py"
    script.write_text(SBATCH.format(n=4))
    train.write_text(TRAIN_8)
    await session.start(tmp_path)
    train_uri = session.open(train)
    await session.codes_become(train_uri, ["FAB010"])
    script_uri = session.open(script)
    await session.codes_become(script_uri, ["FAB010"])
    [diagnostic] = session.published[script_uri][-1][1]
    assert diagnostic.range.start.line == 2  # #SBATCH --ntasks-per-node=4
    assert any(r.location.uri == train_uri for r in diagnostic.related_information or [])

    session.change(script_uri, SBATCH.format(n=8))
    await session.codes_become(train_uri, [])
    await session.codes_become(script_uri, [])


@pytest.mark.asyncio
async def test_a_keystroke_after_a_pause_is_analysed_at_once_and_a_burst_once_it_pauses(
    session: Session, tmp_path: Path
):
    """``debounceMs`` delays only keystrokes that follow one another closely: the first edit
    after a pause is analysed at once; the next, within the debounce, waits until typing has
    paused for the debounce."""
    debounce = 2.0
    train, _ = project(tmp_path, strategy="deepspeed")
    await session.start(tmp_path, options={"debounceMs": int(debounce * 1000)})
    uri = session.open(train)
    assert [d.code for d in await session.publish_after(uri, 0)] == ["FAB001"]
    text = train.read_text()

    started = time.monotonic()
    session.change(uri, text + "\n# after a pause\n")  # version 2
    await until(lambda: any(v == 2 for v, _ in session.published[uri]))
    assert time.monotonic() - started < debounce * 0.75  # at once, not after the debounce

    started = time.monotonic()
    session.change(uri, text + "\n# within the burst\n")  # version 3, right after version 2
    await until(lambda: any(v == 3 for v, _ in session.published[uri]))
    assert time.monotonic() - started >= debounce * 0.9  # once typing paused
    assert [d.code for d in session.published[uri][-1][1]] == ["FAB001"]


@pytest.mark.asyncio
async def test_workspace_diagnostics_keep_the_persistent_cache_and_follow_disk_changes_between_sessions(tmp_path: Path):
    """A second session reads what the first one's ``workspace/diagnostic`` left in
    ``.fabric_lsp_cache/``, and a module changed on disk in between re-analyses its importer."""
    train, config = project(tmp_path, strategy="deepspeed")
    params = types.WorkspaceDiagnosticParams(previous_result_ids=[])

    async def pull_workspace(hits: int) -> dict[str, list]:
        s = Session()
        try:
            await s.start(tmp_path, pull=True)
            report = await asyncio.wait_for(s.client.workspace_diagnostic_async(params), TIMEOUT)
            await until(lambda: any("from the cache" in m for m in s.logs))
            assert f"fabric-lsp: workspace diagnostics: {hits} files from the cache" in s.logs
            return {Path(to_fs_path(item.uri)).name: [d.code for d in item.items] for item in report.items}
        finally:
            await s.stop()

    assert await pull_workspace(hits=0) == {"train.py": ["FAB001"], "config.py": []}
    assert list((tmp_path / ".fabric_lsp_cache").rglob("*.pickle"))
    assert await pull_workspace(hits=2) == {"train.py": ["FAB001"], "config.py": []}
    config.write_text(config_text("ddp"))  # config.py and train.py, which read it, are analysed again
    assert await pull_workspace(hits=0) == {"train.py": [], "config.py": []}
