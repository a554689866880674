"""lsp/head_start.py: the client's first message read before the protocol is imported, given back
to the protocol byte for byte, and the workers it starts for a pulling client's project."""

from __future__ import annotations

import asyncio
import io
import json
import os
import threading
from pathlib import Path

import pytest
from fabric_lsp.lsp import head_start
from fabric_lsp.lsp.head_start import Replayed
from hypothesis import given, settings
from hypothesis import strategies as st
from pygls.io_ import StdinAsyncReader, run_async

TRAIN = """\
from lightning.fabric import Fabric

fabric = Fabric(strategy="deepspeed")
model = fabric.setup_module(model)
optimizer = fabric.setup_optimizers(optimizer)
"""
PULLS = {"textDocument": {"diagnostic": {}}, "workspace": {"diagnostics": {"refreshSupport": True}}}


def framed(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def initialize(root: Path | None, capabilities: dict | None = None, options: dict | None = None) -> dict:
    params = {"capabilities": PULLS if capabilities is None else capabilities, "initializationOptions": options}
    if root is not None:
        params["rootUri"] = root.as_uri()
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}


class Collected:
    """What pygls' own reading loop hands its protocol."""

    def __init__(self) -> None:
        self.messages: list = []

    def structure_message(self, data):
        return data

    def handle_message(self, message) -> None:
        self.messages.append(message)


def read_by_pygls(stream) -> list:
    collected = Collected()
    asyncio.run(run_async(threading.Event(), StdinAsyncReader(stream), collected))
    return collected.messages


def test_the_protocol_reads_every_message_after_the_first_was_read_ahead(tmp_path: Path):
    messages = [initialize(None, capabilities={}), {"jsonrpc": "2.0", "method": "initialized", "params": {}}]
    stream = io.BytesIO(b"".join(map(framed, messages)))
    head = head_start.begin(stream)
    assert head.read == framed(messages[0]) and head.workers is None
    assert read_by_pygls(head.stream(stream)) == messages


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), st.lists(st.one_of(st.none(), st.integers(-1, 40)), max_size=30))
def test_a_replayed_stream_reads_as_the_stream_itself(data: bytes, reads: list[int | None]):
    """Whatever the client sent (a first message or not), the bytes read ahead and what follows
    them read, line by line or by count, as the client's stream itself would."""
    ahead = io.BytesIO(data)
    read, _ = head_start._first_message(ahead)
    assert data.startswith(read)
    replayed, plain = Replayed(read, ahead), io.BytesIO(data)
    for n in reads:
        if n is None:
            assert replayed.readline() == plain.readline()
        else:
            assert replayed.read(n) == plain.read(n)
    assert replayed.read() == plain.read()


@pytest.mark.parametrize(
    "first",
    [
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},  # not an initialize
        initialize(None),  # no folder
        initialize(Path("/nonexistent-fabric-lsp-root"), capabilities={}),  # a client that is pushed to
        initialize(Path("/nonexistent-fabric-lsp-root"), options={"select": 3}),  # settings with a problem
    ],
)
def test_no_head_start_but_for_a_pulling_client_with_a_folder_and_good_settings(first: dict):
    head = head_start.begin(io.BytesIO(framed(first)))
    assert head.read == framed(first) and head.workers is None and head.root is None


def test_a_head_start_submits_the_project_modules_for_its_root_only(tmp_path: Path):
    for i in range(30):
        (tmp_path / f"train_{i}.py").write_text(TRAIN)
    (tmp_path / "plain.py").write_text("x = 1\n")  # no rule's prefilter keeps it
    head = head_start.begin(io.BytesIO(framed(initialize(tmp_path))))
    try:
        assert head.root == str(tmp_path) and head.workers is not None
        assert sorted(Path(p).name for _, paths in head.workers.chunks() for p in paths) == sorted(
            f"train_{i}.py" for i in range(30)
        )
        assert any(m.startswith("fabric-lsp: analysing 30 modules") for m in head.logged)
        directory = str(tmp_path / ".fabric_lsp_cache")
        assert head.cache is not None and head.cache_at(directory, str(tmp_path), None) is head.cache
        assert head.cache_at(directory, str(tmp_path), "/another/python") is None  # not the session's
        assert head.take_workers(str(tmp_path / "elsewhere"), None, print) is None  # another root: closed
        assert head.workers is None
    finally:
        head.drop()


_CHILDREN = """\
import gc, os, sys
from fabric_lsp.lsp import head_start

with open(sys.argv[1], "rb") as stream:
    head = head_start.begin(stream)
me = os.getpid()
with open(f"/proc/{me}/task/{me}/children") as f:
    kids = f.read().split()
mine = open("/proc/self/cmdline", "rb").read()
same = all(open(f"/proc/{k}/cmdline", "rb").read() == mine for k in kids)
print(len(kids), same, head.workers is not None, gc.get_freeze_count() > 0)
head.drop()
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads Linux's /proc")
def test_a_head_start_forks_its_workers_from_the_server_process(tmp_path: Path):
    """Before the protocol runs a thread, the head start's workers are forked from the server's own
    process (which has imported the engine): they start at once, not once a fork server started
    from a fresh interpreter has imported it. Its only children are the two workers, each a fork
    of it (the same command line), not a fork server. What the server's process held when it
    forked them (the engine) is frozen: neither it nor a worker scans those objects again."""
    import os
    import subprocess
    import sys

    for i in range(30):
        (tmp_path / f"train_{i}.py").write_text(TRAIN)
    first = tmp_path.parent / f"{tmp_path.name}-initialize"
    first.write_bytes(framed(initialize(tmp_path)))
    env = {**os.environ, "PYTHONPATH": str(Path(head_start.__file__).resolve().parents[2])}
    run = subprocess.run(
        [sys.executable, "-c", _CHILDREN, str(first)], capture_output=True, text=True, timeout=120, env=env
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["2", "True", "True", "True"]


def test_a_head_start_works_out_the_lightning_versions_before_its_workers_start(tmp_path: Path, version_reads):
    """The Lightning version the project declares, and the one installed in the analysed
    environment, are read once, in the server's process, before it forks the head start's workers
    (a worker would import ``packaging`` and read the requirements again, and read the packages'
    metadata again, ~15–30 ms each at its start). Each process that reads either leaves a mark."""
    for i in range(30):
        (tmp_path / f"train_{i}.py").write_text(TRAIN)
    head = head_start.begin(io.BytesIO(framed(initialize(tmp_path))))
    try:
        assert head.workers is not None
        found = [head.workers.result(str(tmp_path / f"train_{i}.py"), TRAIN) for i in range(30)]
    finally:
        head.drop()
    assert all(done is not None and "FAB001" in {f.code for f in done.findings} for done in found)
    assert version_reads() == [f"declared-read-by-{os.getpid()}", f"installed-read-by-{os.getpid()}"]
