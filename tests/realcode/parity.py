"""The same findings, with the same severity, through the command line and the language server,
on the real-code corpus: each pinned repository is checked from its root with
``fabric-lsp check . --format json`` and pulled whole through the server's ``workspace/diagnostic``;
every Python file's findings (file, line, code, severity) must agree.

    python tests/realcode/parity.py --snapshots DIR [NAME ...]

Like ``report.py``, a measurement run by hand on fetched snapshots (not part of the test-suite).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import to_fs_path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import Unpacked, load_repos, snapshot_dir, unpack  # noqa: E402

SEVERITY = {1: "error", 2: "warning", 3: "information", 4: "hint"}
TIMEOUT = 1800


def cli_findings(root: Path) -> set[tuple]:
    proc = subprocess.run(
        [sys.executable, "-m", "fabric_lsp", "check", ".", "--format", "json", "--exit-zero", "--no-cache"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    rows = json.loads(proc.stdout or "[]")
    return {
        (os.path.relpath(os.path.join(root, r["filename"]), root), r["location"]["row"], r["code"], r["severity"])
        for r in rows
        if r["filename"].endswith(".py")
    }


async def lsp_findings(root: Path, environment: str | None = None, python: str = sys.executable) -> set[tuple]:
    """The findings the server (run by ``python``) reports for ``root`` through ``workspace/diagnostic``."""
    client = LanguageClient("parity", "1")

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def _log(params: types.LogMessageParams) -> None:
        pass

    @client.feature(types.WORKSPACE_DIAGNOSTIC_REFRESH)
    def _refresh(params: None) -> None:
        pass

    await client.start_io(python, "-m", "fabric_lsp")
    caps = types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            diagnostic=types.DiagnosticClientCapabilities(related_document_support=True)
        ),
        workspace=types.WorkspaceClientCapabilities(
            diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
        ),
    )
    options = {"environmentPath": environment} if environment else None  # the interpreter jedi analyses
    await client.initialize_async(
        types.InitializeParams(capabilities=caps, root_uri=root.as_uri(), initialization_options=options)
    )
    client.initialized(types.InitializedParams())
    try:
        report = await asyncio.wait_for(
            client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[])), TIMEOUT
        )
    finally:
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
    out = set()
    for item in report.items:
        rel = os.path.relpath(to_fs_path(item.uri), root)
        for d in item.items:
            out.add((rel, d.range.start.line + 1, str(d.code), SEVERITY[int(d.severity or 1)]))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="*")
    p.add_argument("--snapshots", default=os.environ.get("FABRIC_LSP_SNAPSHOTS"), required=False)
    args = p.parse_args(argv)
    if not args.snapshots:
        p.error("--snapshots DIR (or $FABRIC_LSP_SNAPSHOTS) is needed")
    total = disagreeing = 0
    with tempfile.TemporaryDirectory(prefix="parity-") as scratch:
        for repo in load_repos(args.names):
            git_dir = snapshot_dir(Path(args.snapshots), repo)
            if git_dir is None:
                print(f"{repo.name}: no snapshot", file=sys.stderr)
                continue
            try:
                root = unpack(git_dir, repo, Path(scratch))
            except Unpacked as exc:
                print(exc, file=sys.stderr)
                continue
            cli, lsp = cli_findings(root), asyncio.run(lsp_findings(root))
            total += len(cli)
            differ = cli ^ lsp
            disagreeing += len(differ)
            print(
                f"{repo.name}: {len(cli)} findings through the CLI, {len(lsp)} through the server, {len(differ)} differ"
            )
            for row in sorted(differ, key=str):
                print(f"  {'cli' if row in cli else 'lsp'} only: {row}")
    print(f"total: {total} CLI findings in .py files, {disagreeing} differ between the CLI and the server")
    return 1 if disagreeing else 0


if __name__ == "__main__":
    sys.exit(main())
