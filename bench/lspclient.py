"""A minimal LSP client over stdio (JSON-RPC 2.0, Content-Length framing), standard library only.

The same client drives every server the benchmark compares (fabric-lsp, ruff server,
jedi-language-server), so the figures differ only by the server. It records the arrival time of
every ``textDocument/publishDiagnostics`` and lets the caller wait for the one that answers a
given document version.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

CLIENT_CAPABILITIES: dict = {
    "general": {"positionEncodings": ["utf-16"]},
    "workspace": {
        "workspaceEdit": {"documentChanges": True},
        "configuration": True,
        "didChangeConfiguration": {"dynamicRegistration": False},
        "workspaceFolders": True,
    },
    "textDocument": {
        "synchronization": {"didSave": True, "dynamicRegistration": False},
        "publishDiagnostics": {"versionSupport": True, "relatedInformation": True},
        "codeAction": {
            "codeActionLiteralSupport": {
                "codeActionKind": {"valueSet": ["", "quickfix", "refactor", "source", "source.fixAll", "source.organizeImports"]}
            },
            "isPreferredSupport": True,
            "dataSupport": True,
            "resolveSupport": {"properties": ["edit"]},
        },
        # no "diagnostic" entry: servers that can do both (ruff) fall back to push diagnostics
    },
    "window": {"workDoneProgress": False},
}


@dataclass
class Published:
    t: float  # time.perf_counter() at arrival
    version: int | None
    n: int  # number of diagnostics


@dataclass
class DocState:
    uri: str
    text: str
    version: int = 0
    published: list = field(default_factory=list)
    last_diagnostics: list = field(default_factory=list)


class LspClient:
    def __init__(self, argv: list[str], env: dict | None = None, cwd: str | None = None, stderr_path: str | None = None):
        self.argv = argv
        self.env = env
        self.cwd = cwd
        self.stderr_path = stderr_path
        self.proc: asyncio.subprocess.Process | None = None
        self._next_id = 0
        self._pending: dict[int, asyncio.Future] = {}
        self._reader: asyncio.Task | None = None
        self._diag_waiters: list[tuple[str, int | None, float, asyncio.Future]] = []
        self.docs: dict[str, DocState] = {}
        self.spawn_t0 = 0.0
        self.log_messages: list[str] = []
        self._stderr_fh = None

    # -- process -------------------------------------------------------------------------------
    async def start(self) -> None:
        self._stderr_fh = open(self.stderr_path, "ab") if self.stderr_path else open(os.devnull, "wb")
        self.spawn_t0 = time.perf_counter()
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=self._stderr_fh,
            env=self.env,
            cwd=self.cwd,
            limit=1 << 26,
        )
        self._reader = asyncio.get_running_loop().create_task(self._read_loop())

    @property
    def pid(self) -> int:
        return self.proc.pid

    async def stop(self, timeout: float = 5.0) -> None:
        if self.proc is None:
            return
        try:
            if self.proc.returncode is None:
                try:
                    await asyncio.wait_for(self.request("shutdown", None), timeout)
                    self.notify("exit", None)
                except Exception:
                    pass
                try:
                    await asyncio.wait_for(self.proc.wait(), timeout)
                except asyncio.TimeoutError:
                    self.proc.kill()
                    await self.proc.wait()
        finally:
            if self._reader is not None:
                self._reader.cancel()
            if self._stderr_fh is not None:
                self._stderr_fh.close()

    # -- framing -------------------------------------------------------------------------------
    def _send(self, msg: dict) -> None:
        body = json.dumps(msg, separators=(",", ":")).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def _read_loop(self) -> None:
        reader = self.proc.stdout
        try:
            while True:
                length = None
                while True:
                    line = await reader.readline()
                    if not line:
                        raise EOFError
                    line = line.strip()
                    if not line:
                        break
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                if length is None:  # stray output on stdout (not LSP): skip it
                    self.log_messages.append("stray stdout before a header")
                    continue
                body = await reader.readexactly(length)
                t = time.perf_counter()
                self._dispatch(json.loads(body), t)
        except (EOFError, asyncio.IncompleteReadError, ConnectionResetError):
            err = ConnectionError(f"server {self.argv[0]} closed its output")
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(err)
            for _, _, _, fut in self._diag_waiters:
                if not fut.done():
                    fut.set_exception(err)

    def _dispatch(self, msg: dict, t: float) -> None:
        if "id" in msg and "method" not in msg:  # a response
            fut = self._pending.pop(msg["id"], None)
            if fut is not None and not fut.done():
                if "error" in msg and msg["error"] is not None:
                    fut.set_exception(RuntimeError(f"LSP error: {msg['error']}"))
                else:
                    fut.set_result((msg.get("result"), t))
            return
        method = msg.get("method")
        params = msg.get("params")
        if "id" in msg:  # a request from the server: answer the few that servers send
            result: Any = None
            if method == "workspace/configuration":
                result = [None for _ in (params or {}).get("items", [])]
            self._send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
            return
        if method == "textDocument/publishDiagnostics":
            uri = params["uri"]
            version = params.get("version")
            doc = self.docs.get(uri)
            rec = Published(t, version, len(params.get("diagnostics") or []))
            if doc is not None:
                doc.published.append(rec)
                doc.last_diagnostics = params.get("diagnostics") or []
            for entry in list(self._diag_waiters):
                w_uri, w_version, w_after, fut = entry
                if w_uri != uri or fut.done():
                    continue
                if w_version is not None and version is not None:
                    ok = version >= w_version
                else:  # a server that sends no version: the first publication after the change
                    ok = t >= w_after
                if ok:
                    fut.set_result(rec)
                    self._diag_waiters.remove(entry)
        elif method in ("window/logMessage", "window/showMessage"):
            self.log_messages.append(str((params or {}).get("message", ""))[:500])

    # -- JSON-RPC ------------------------------------------------------------------------------
    def request_nowait(self, method: str, params: Any) -> asyncio.Future:
        self._next_id += 1
        fut = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = fut
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return fut

    async def request(self, method: str, params: Any, timeout: float = 120.0) -> Any:
        result, _ = await asyncio.wait_for(self.request_nowait(method, params), timeout)
        return result

    async def timed_request(self, method: str, params: Any, timeout: float = 120.0) -> tuple[Any, float]:
        t0 = time.perf_counter()
        fut = self.request_nowait(method, params)
        await self.proc.stdin.drain()
        result, t1 = await asyncio.wait_for(fut, timeout)
        return result, t1 - t0

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    # -- LSP -----------------------------------------------------------------------------------
    async def initialize(self, root: str, initialization_options: Any = None) -> dict:
        root_uri = path_to_uri(root)
        result = await self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "clientInfo": {"name": "fabric-lsp-bench", "version": "1"},
                "rootUri": root_uri,
                "rootPath": root,
                "workspaceFolders": [{"uri": root_uri, "name": os.path.basename(root) or "root"}],
                "capabilities": CLIENT_CAPABILITIES,
                "initializationOptions": initialization_options,
            },
        )
        self.notify("initialized", {})
        return result

    def diag_future(self, uri: str, version: int | None, after: float) -> asyncio.Future:
        fut = asyncio.get_running_loop().create_future()
        self._diag_waiters.append((uri, version, after, fut))
        return fut

    def did_open(self, path: str, text: str) -> tuple[str, asyncio.Future]:
        uri = path_to_uri(path)
        doc = DocState(uri, text, version=1)
        self.docs[uri] = doc
        fut = self.diag_future(uri, 1, time.perf_counter())
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
        return uri, fut

    def did_change(self, uri: str, line: int, col: int, insert: str) -> asyncio.Future:
        """Insert ``insert`` at (line, col) as one incremental change; a future for its diagnostics."""
        doc = self.docs[uri]
        doc.version += 1
        fut = self.diag_future(uri, doc.version, time.perf_counter())
        self.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": doc.version},
                "contentChanges": [
                    {"range": {"start": {"line": line, "character": col}, "end": {"line": line, "character": col}}, "text": insert}
                ],
            },
        )
        return fut

    def did_close(self, uri: str) -> None:
        self.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        self.docs.pop(uri, None)

    async def drain(self) -> None:
        await self.proc.stdin.drain()


def path_to_uri(path: str) -> str:
    from urllib.parse import quote

    return "file://" + quote(os.path.abspath(path))


def rss_tree_kb(pid: int) -> dict:
    """VmRSS/VmHWM (kB) of ``pid`` and the current RSS of its descendants, read from /proc."""

    def status(p: int) -> dict:
        out = {}
        try:
            with open(f"/proc/{p}/status") as fh:
                for line in fh:
                    if line.startswith(("VmRSS:", "VmHWM:")):
                        k, v = line.split(":", 1)
                        out[k] = int(v.split()[0])
        except OSError:
            pass
        return out

    def children(p: int) -> list[int]:
        kids = []
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                try:
                    with open(f"/proc/{p}/task/{task}/children") as fh:
                        kids.extend(int(x) for x in fh.read().split())
                except OSError:
                    pass
        except OSError:
            pass
        return kids

    main = status(pid)
    desc_rss = 0
    desc_hwm = 0
    stack = children(pid)
    seen = set()
    while stack:
        c = stack.pop()
        if c in seen:
            continue
        seen.add(c)
        s = status(c)
        desc_rss += s.get("VmRSS", 0)
        desc_hwm += s.get("VmHWM", 0)
        stack.extend(children(c))
    return {
        "rss_kb": main.get("VmRSS", 0),
        "hwm_kb": main.get("VmHWM", 0),
        "children_rss_kb": desc_rss,
        "children_hwm_kb": desc_hwm,
        "n_children": len(seen),
    }
