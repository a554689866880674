"""Reliability of the live server: stateful fuzzing with random incremental edits, positions in
every encoding, bad and big input, malformed JSON-RPC, and the guarantee that analysing a
workspace never executes its code."""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fabric_lsp.engine import Analyzer
from fabric_lsp.engine.python.text import Lines
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.lsp.positions import Encoder
from fabric_lsp.rules import ALL_RULES
from lsprotocol import types
from pygls.lsp.client import LanguageClient

TIMEOUT = 30
FUZZ_EDITS = int(os.environ.get("FABRIC_LSP_FUZZ_EDITS", "10000"))
FUZZ_SECONDS = float(os.environ.get("FABRIC_LSP_FUZZ_SECONDS", "240"))

SEED_TEXT = """# Grüße 🚀 漢字 é (e + combining acute: é)
import torch
from lightning.fabric import Fabric

fabric = Fabric(strategy="deepspeed_stage_3")
fabric.launch()
model = torch.nn.Linear(4, 2)
model = fabric.setup_module(model)\t# tab before comment
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)  # 🚀
"""

FRAGMENTS = [
    "x",
    "(",
    ")",
    "[",
    "]",
    '"',
    "'",
    ":",
    "\n",
    "\r\n",
    "    ",
    "\t",
    "🚀",
    "漢",
    "é",
    "\x00",
    "fabric.setup_optimizers(",
    "fabric.setup_optimizers(opt)\n",
    "model = fabric.setup_module(model)\n",
    'Fabric(strategy="xla")',
    "def f(:\n",
    "if True:\n    ",
    "import lightning as L\n",
    "#",
    "\\",
    '"""',
    "lambda: (",
    "**",
    "self.fabric",
    ",",
    "=",
    "class A:\n",
]


class Session:
    """A raw client on the real server process that records every publish."""

    def __init__(self, encoding: str = "utf-16", resolve: bool = True):
        self.client = LanguageClient("fuzz", "1")
        self.encoding = encoding
        self.resolve = resolve
        self.published: dict[str, list[tuple[int | None, list]]] = {}
        self.logs: list[str] = []

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: types.PublishDiagnosticsParams):
            self.published.setdefault(params.uri, []).append((params.version, list(params.diagnostics)))

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def on_log(params: types.LogMessageParams):
            self.logs.append(params.message)

        @self.client.feature(types.WINDOW_SHOW_MESSAGE)
        def on_show(params):
            self.logs.append(params.message)

        @self.client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def on_register(params):
            return None

    async def start(self, root: Path, options=None):
        await self.client.start_io(sys.executable, "-m", "fabric_lsp")
        caps = types.ClientCapabilities(
            general=types.GeneralClientCapabilities(position_encodings=[self.encoding]),
            text_document=types.TextDocumentClientCapabilities(
                code_action=types.CodeActionClientCapabilities(
                    resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"]) if self.resolve else None,
                )
            ),
            workspace=types.WorkspaceClientCapabilities(
                workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True)
            ),
        )
        result = await asyncio.wait_for(
            self.client.initialize_async(
                types.InitializeParams(
                    capabilities=caps, root_uri=root.as_uri(), initialization_options=options or {"debounceMs": 0}
                )
            ),
            TIMEOUT,
        )
        self.client.initialized(types.InitializedParams())
        return result

    async def stop(self):
        await asyncio.wait_for(self.client.shutdown_async(None), TIMEOUT)
        self.client.exit(None)
        await asyncio.wait_for(self.client.stop(), TIMEOUT)

    def open(self, uri: str, text: str, version: int = 1):
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
            )
        )

    async def until_version(self, uri: str, version: int, timeout: float = TIMEOUT):
        async def poll():
            while not any(v == version for v, _ in self.published.get(uri, [])):
                await asyncio.sleep(0.02)
            return next(d for v, d in reversed(self.published[uri]) if v == version)

        return await asyncio.wait_for(poll(), timeout)


def expected(text: str, enc: Encoder, root: Path, path: Path):
    lines = Lines(text)
    findings = Analyzer(Workspace(str(root)), ALL_RULES).analyze(text, str(path))
    return sorted(
        (enc.range_to_lsp(lines, f.span).start.line, enc.range_to_lsp(lines, f.span).start.character, f.code)
        for f in findings
    )


def got(diags):
    return sorted((d.range.start.line, d.range.start.character, d.code) for d in diags)


def random_edit(rng: random.Random, text: str):
    """A random replacement (start, end, new) on code-point offsets, at character boundaries."""
    n = len(text)
    start = rng.randint(0, n)
    if rng.random() < 0.35 and n:
        end = min(n, start + rng.randint(1, 12))
        new = "" if rng.random() < 0.6 else rng.choice(FRAGMENTS)
    else:
        end = start
        new = rng.choice(FRAGMENTS)
    # never split a CRLF pair: the server and this model would disagree on lines
    if 0 < start < n and text[start - 1] == "\r" and text[start] == "\n":
        start -= 1
    if 0 < end < n and text[end - 1] == "\r" and text[end] == "\n":
        end += 1
    end = max(end, start)
    return start, end, new


def offset_to_pos(lines: Lines, offset: int):
    import bisect

    from fabric_lsp.engine.findings import Pos

    i = max(0, bisect.bisect_right(lines.starts, offset) - 1) if lines.starts else 0
    if not lines.starts:
        return Pos(0, 0)
    col = offset - lines.starts[i]
    content_len = len(lines.content(i))
    if col > content_len:  # inside the line terminator: position at the next line's start
        return Pos(i + 1, 0)
    return Pos(i, col)


@pytest.mark.slow
@pytest.mark.asyncio
@pytest.mark.timeout(900)
@pytest.mark.parametrize("encoding", ["utf-16"])
async def test_stateful_fuzz_of_live_server(tmp_path, encoding):
    rng = random.Random(20261129)
    session = Session(encoding)
    await session.start(tmp_path, {"debounceMs": 5})
    enc = Encoder(encoding)
    docs = {}
    for i in range(3):
        path = tmp_path / f"doc{i}.py"
        uri = path.as_uri()
        text = SEED_TEXT if i != 1 else SEED_TEXT.replace("\n", "\r\n")
        docs[uri] = [path, text, 1]
        session.open(uri, text)
    edits = 0
    requests = 0
    started = time.monotonic()
    while edits < FUZZ_EDITS and time.monotonic() - started < FUZZ_SECONDS:
        uri = rng.choice(list(docs))
        path, text, version = docs[uri]
        lines = Lines(text)
        start, end, new = random_edit(rng, text)
        rng_range = types.Range(
            start=enc.to_lsp(lines, offset_to_pos(lines, start)), end=enc.to_lsp(lines, offset_to_pos(lines, end))
        )
        text = text[:start] + new + text[end:]
        version += 1
        docs[uri] = [path, text, version]
        session.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangePartial(range=rng_range, text=new)],
            )
        )
        edits += 1
        roll = rng.random()
        if roll < 0.01:  # a code action (and resolve) request somewhere in the document
            requests += 1
            pos = enc.to_lsp(Lines(text), offset_to_pos(Lines(text), rng.randint(0, len(text))))
            actions = await asyncio.wait_for(
                session.client.text_document_code_action_async(
                    types.CodeActionParams(
                        types.TextDocumentIdentifier(uri), types.Range(start=pos, end=pos), types.CodeActionContext([])
                    )
                ),
                TIMEOUT,
            )
            for a in actions or []:
                await asyncio.wait_for(session.client.code_action_resolve_async(a), TIMEOUT)
        elif roll < 0.015:
            requests += 1
            pos = enc.to_lsp(Lines(text), offset_to_pos(Lines(text), rng.randint(0, len(text))))
            await asyncio.wait_for(
                session.client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), pos)),
                TIMEOUT,
            )
        elif roll < 0.017:
            session.client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
        elif roll < 0.018:  # close and reopen
            session.client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
            version += 1
            docs[uri][2] = version
            session.open(uri, text, version)
        if edits % 50 == 0:
            await asyncio.sleep(0.01)  # let the server breathe, as a typist would
    # after the edits stop, the diagnostics equal a fresh check of the final text
    for uri, (path, text, version) in docs.items():
        final = await session.until_version(uri, version, timeout=60)
        assert got(final) == expected(text, enc, tmp_path, path), (uri, text)
        versions = [v for v, _ in session.published[uri] if v is not None]
        # never a version older than one already published (a reopen restarts the sequence)
        assert all(b >= a for a, b in zip(versions, versions[1:])), versions
    assert not session.client.stopped
    assert not [m for m in session.logs if "Traceback" in m], session.logs[:3]
    print(f"fuzz: {edits} edits, {requests} requests in {time.monotonic() - started:.1f}s")
    await session.stop()


COMBINING = "e\u0301"  # e + combining acute accent: two code points, one glyph
POSITION_TEXT = (
    f"# {COMBINING} 🚀 漢字\r\n"
    "import lightning as L\r\n"
    "\r\n"
    "def train(fabric):\r\n"
    f'\tnote = "{COMBINING}🚀"\r\n'
    "\tmodel = fabric.setup_module(model)  # 🚀 first\r\n"
    "\topt = fabric.setup_optimizers(opt)  # 漢字 é\r\n"
    "\r\n"
    'fabric = L.Fabric(strategy="deepspeed")  # 🚀\r\n'
    "fabric.launch(train)\r\n"
)


@pytest.mark.asyncio
@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
@pytest.mark.parametrize("resolve", [True, False])
async def test_positions_are_exact_in_every_encoding(tmp_path, encoding, resolve):
    session = Session(encoding, resolve)
    init = await session.start(tmp_path)
    assert init.capabilities.position_encoding == encoding
    enc = Encoder(encoding)
    path = tmp_path / "train.py"
    uri = path.as_uri()
    session.open(uri, POSITION_TEXT)
    diags = await session.until_version(uri, 1)
    assert len(diags) == 1
    lines = Lines(POSITION_TEXT)
    d = diags[0]
    span = enc.range_from_lsp(lines, d.range)
    assert lines.content(span.start.line)[span.start.col : span.end.col] == "fabric.setup_optimizers(opt)"
    # related information points at exact ranges too
    texts = {r.message: enc.range_from_lsp(lines, r.location.range) for r in d.related_information}
    setup = texts["Model set up separately here"]
    assert lines.content(setup.start.line)[setup.start.col : setup.end.col] == "fabric.setup_module(model)"
    origin = texts["Strategy chosen here: DeepSpeedStrategy"]
    assert lines.content(origin.start.line)[origin.start.col : origin.end.col] == '"deepspeed"'
    # the code action's edit, applied in the negotiated encoding, gives the expected text
    actions = await session.client.text_document_code_action_async(
        types.CodeActionParams(types.TextDocumentIdentifier(uri), d.range, types.CodeActionContext([d]))
    )
    action = next(a for a in actions if a.title.startswith("Set up model"))
    if action.edit is None:
        action = await session.client.code_action_resolve_async(action)
    change = action.edit.document_changes[0]
    assert change.text_document.uri == uri and change.text_document.version == 1
    text = POSITION_TEXT
    for e in sorted(change.edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        sp = enc.range_from_lsp(Lines(text), e.range)
        lines_now = Lines(text)
        text = text[: lines_now.offset(sp.start)] + e.new_text + text[lines_now.offset(sp.end) :]
    assert "\topt = fabric.setup_optimizers" not in text
    assert "\tmodel, opt = fabric.setup(model, opt)  # 漢字 é\r\n" in text
    assert "\n" not in text.replace("\r\n", "")
    await session.stop()


@pytest.mark.slow
@pytest.mark.asyncio
async def test_big_file_diagnostics_within_two_seconds(tmp_path):
    filler = "".join(f"def helper_{i}(x):\n    return x + {i}\n\n" for i in range(16_700))
    text = SEED_TEXT + filler
    assert text.count("\n") >= 50_000
    session = Session()
    await session.start(tmp_path)
    uri = (tmp_path / "big.py").as_uri()
    started = time.monotonic()
    session.open(uri, text)
    diags = await session.until_version(uri, 1, timeout=30)
    elapsed = time.monotonic() - started
    assert [d.code for d in diags] == ["FAB001"]
    # The goal is 2 s on this 2-core machine. When the machine is loaded (other jobs), scale it by
    # how much slower a plain `ast.parse` of the same text is than on an idle machine (~0.75 s).
    import ast

    t0 = time.monotonic()
    ast.parse(text)
    parse = time.monotonic() - t0
    budget = 2.0 * max(1.0, parse / 0.75)
    assert elapsed < budget, f"50,000 lines took {elapsed:.2f}s (budget {budget:.2f}s, ast.parse {parse:.2f}s)"
    await session.stop()


@pytest.mark.asyncio
async def test_bad_input_never_crashes_the_server(tmp_path):
    session = Session()
    await session.start(tmp_path)
    cases = {
        "empty.py": "",
        "nul.py": "fabric.setup_optimizers(x)\x00\n",
        "deep.py": "x = " + "(" * 5000 + "fabric.setup_optimizers(o)" + ")" * 5000 + "\n",
        "recursive.py": "from lightning.fabric import Fabric\ndef f(a):\n    return f(a)\nfabric = f(Fabric(strategy='xla'))\n"
        + "fabric.setup_optimizers(o)\n",
        "chain.py": "fabric = 1\n" + "".join("fabric = fabric\n" for _ in range(3000)) + "fabric.setup_optimizers(o)\n",
        "halftyped.py": 'from lightning.fabric import Fabric\nfabric = Fabric(strategy="deepspeed"\nopt = fabric.setup_optimizers(',
    }
    for name, text in cases.items():
        session.open((tmp_path / name).as_uri(), text)
    for name in cases:
        await session.until_version((tmp_path / name).as_uri(), 1)
    # the server still answers
    hover = await asyncio.wait_for(
        session.client.text_document_hover_async(
            types.HoverParams(
                types.TextDocumentIdentifier((tmp_path / "deep.py").as_uri()), types.Position(line=0, character=9000)
            )
        ),
        TIMEOUT,
    )
    assert hover is None or hover.contents
    assert not session.client.stopped
    await session.stop()


def _frame(payload: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(payload) + payload


def _read_messages(stream, count: int, timeout: float = TIMEOUT) -> list[dict]:
    out = []
    deadline = time.monotonic() + timeout
    while len(out) < count and time.monotonic() < deadline:
        header = b""
        while not header.endswith(b"\r\n\r\n"):
            ch = stream.read(1)
            if not ch:
                return out
            header += ch
        length = int([h for h in header.split(b"\r\n") if h.lower().startswith(b"content-length")][0].split(b":")[1])
        out.append(json.loads(stream.read(length)))
    return out


def test_malformed_json_rpc_and_unknown_methods(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "fabric_lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"capabilities": {}, "rootUri": tmp_path.as_uri()},
        }
        proc.stdin.write(_frame(json.dumps(init).encode()))
        proc.stdin.write(_frame(b"{this is not json"))
        proc.stdin.write(
            _frame(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "fabric/doesNotExist", "params": {}}).encode())
        )
        proc.stdin.write(
            _frame(
                json.dumps({"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover", "params": {"bogus": 1}}).encode()
            )
        )
        proc.stdin.write(_frame(json.dumps({"jsonrpc": "2.0", "id": 4, "method": "shutdown"}).encode()))
        proc.stdin.flush()
        msgs = _read_messages(proc.stdout, 5)
        by_id = {m.get("id"): m for m in msgs if "id" in m}
        assert "result" in by_id[1]
        assert by_id[2]["error"]["code"] == -32601  # method not found
        assert "error" in by_id[3]
        assert by_id[4].get("result", "missing") is None
        proc.stdin.write(_frame(json.dumps({"jsonrpc": "2.0", "method": "exit"}).encode()))
        proc.stdin.flush()
        assert proc.wait(timeout=TIMEOUT) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
        proc.stderr.close()
        proc.stdin.close()


@pytest.mark.asyncio
async def test_analysing_a_workspace_never_executes_its_code(tmp_path):
    canary = tmp_path / "PWNED"
    (tmp_path / "evil.py").write_text(
        f"open({str(canary)!r}, 'w').write('executed')\n"
        "import lightning as L\n"
        "def build_fabric():\n"
        "    return L.Fabric(strategy='deepspeed')\n"
    )
    (tmp_path / "evil_pkg").mkdir()
    (tmp_path / "evil_pkg" / "__init__.py").write_text(f"open({str(canary)!r}, 'w').write('executed')\n")
    text = (
        "import evil_pkg\nfrom evil import build_fabric\n\nfabric = build_fabric()\nfabric.launch()\n"
        "model = fabric.setup_module(model)\nopt = fabric.setup_optimizers(opt)\n"
    )
    (tmp_path / "train.py").write_text(text)
    session = Session()
    await session.start(tmp_path)
    uri = (tmp_path / "train.py").as_uri()
    session.open(uri, text)
    diags = await session.until_version(uri, 1)
    assert [d.severity for d in diags] == [types.DiagnosticSeverity.Error]  # inferred through evil.py
    await session.client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line=6, character=8))
    )
    actions = await session.client.text_document_code_action_async(
        types.CodeActionParams(types.TextDocumentIdentifier(uri), diags[0].range, types.CodeActionContext(diags))
    )
    for a in actions:
        a = a if a.edit else await session.client.code_action_resolve_async(a)
        for change in a.edit.document_changes:
            assert change.text_document.uri == uri  # edits only ever touch the document asked about
    await session.stop()
    # and the command line
    subprocess.run(
        [sys.executable, "-m", "fabric_lsp", "check", "--fix", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
    )
    assert not canary.exists()


def test_cli_survives_a_symlink_loop(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "loop").symlink_to(tmp_path / "pkg", target_is_directory=True)
    (tmp_path / "pkg" / "train.py").write_text(
        "from lightning.fabric import Fabric\nf = Fabric(strategy='xla')\no = f.setup_optimizers(o)\n"
    )
    r = subprocess.run(
        [sys.executable, "-m", "fabric_lsp", "check", "--format", "json", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert r.returncode == 1, r.stderr
    assert len([f for f in json.loads(r.stdout) if f["code"] == "FAB001"]) == 1  # FAB007: XLA needs launch(fn)
