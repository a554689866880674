"""A head start on the cold ``workspace/diagnostic``: what ``fabric-lsp serve`` does before it
imports the protocol.

Importing pygls and lsprotocol takes a third of a second, and until then the server cannot answer
``initialize``; a client that pulls diagnostics then asks for the workspace's at once. So the
server reads the client's first message itself: when it is an ``initialize`` from a client that
pulls diagnostics, the server lists the project, reads its cache and hands the modules to be
analysed to worker processes (as that ``workspace/diagnostic`` will), forked from itself (it runs
no other thread yet) — and imports the protocol while they analyse. The protocol then reads the
same message from the same bytes.

Nothing here decides a finding. The session takes the workers (:meth:`HeadStart.take_workers`) for
its first workspace report only with the same root and interpreter, and keeps only the jobs it would
have handed out itself, equal in path, text and configuration (:meth:`Workers.submit
<fabric_lsp.documents.workers.Workers.submit>`); the others it hands out afresh. A head start
nobody takes is dropped after :data:`WAIT` seconds or at ``shutdown``. Anything unexpected (another
first message, settings with a problem, an error) only means no head start.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, cast

from pygls.uris import to_fs_path

from fabric_lsp.config import Config, Resolver, client_layer, client_layers
from fabric_lsp.documents import check
from fabric_lsp.documents.workers import Workers, cores, module_job

if TYPE_CHECKING:
    from fabric_lsp.documents.cache import Cache

#: seconds after ``initialize`` that a head start waits for the ``workspace/diagnostic`` it is for
WAIT = 10.0
_CONTENT_LENGTH = re.compile(rb"^Content-Length: (\d+)\r\n$")  # as pygls reads it


@dataclass
class HeadStart:
    """What the server did before the protocol: the bytes of the client's first message it read,
    and the workers it started with the cache it read, for ``root`` and ``environment``."""

    read: bytes = b""
    root: str | None = None
    environment: str | None = None
    workers: Workers | None = None
    cache: Cache | None = None
    logged: list[str] = field(default_factory=list)

    def stream(self, stdin: BinaryIO) -> BinaryIO:
        """The client's stream as the protocol reads it: the bytes read here first."""
        return cast(BinaryIO, Replayed(self.read, stdin))  # all the protocol reads: readline, read

    def cache_at(self, directory: str, root: str, environment: str | None) -> Cache | None:
        """The cache read here, where it is the one in ``directory`` for ``root`` and ``environment``."""
        cache = self.cache
        return (
            cache
            if cache is not None and (cache.directory, self.root, self.environment) == (directory, root, environment)
            else None
        )

    def take_workers(self, root: str | None, environment: str | None, log: Callable[[str], None]) -> Workers | None:
        """The workers under way, for the session's first workspace report over ``root`` analysed
        for ``environment``, logging to ``log`` from now on (closed, and None, where the session's
        are not these)."""
        workers, self.workers = self.workers, None
        if workers is not None and (root, environment) != (self.root, self.environment):
            workers.close()
            return None
        if workers is not None:
            workers.log = log
        return workers

    def drop(self) -> None:
        if self.workers is not None:
            self.workers.close()
        self.workers, self.cache = None, None


class Replayed:
    """A binary stream that gives ``head`` before what is left of ``rest``."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._head, self._rest = io.BytesIO(head), rest

    def readline(self) -> bytes:
        return self._head.readline() or self._rest.readline()

    def read(self, n: int = -1) -> bytes:
        data = self._head.read(n)
        if n < 0:
            return data + self._rest.read()
        return data if len(data) == n else data + self._rest.read(n - len(data))

    def close(self) -> None:
        self._rest.close()


def begin(stdin: BinaryIO) -> HeadStart:
    """Read the client's first message from ``stdin`` and, when it is an ``initialize`` of a
    client that pulls diagnostics, start the workers on the project's modules."""
    read, message = _first_message(stdin)
    head = HeadStart(read)
    try:
        _start(head, message)
    except Exception as exc:  # the session does it all again: no head start is all that is lost
        head.drop()
        head.logged.append(f"fabric-lsp: no head start ({type(exc).__name__}: {exc})")
    return head


def _first_message(stdin: BinaryIO) -> tuple[bytes, Any]:
    """The bytes of the first message (headers and body, read as pygls reads them) and its JSON."""
    read = bytearray()
    length = 0
    while True:
        line = stdin.readline()
        read += line
        if not line:
            return bytes(read), None
        match = _CONTENT_LENGTH.fullmatch(line) if not length else None
        length = int(match.group(1)) if match else length
        if length and not line.strip():
            break
    body = stdin.read(length)
    read += body
    try:
        return bytes(read), json.loads(body)
    except ValueError:
        return bytes(read), None


def _start(head: HeadStart, message: Any) -> None:
    params = message.get("params") if isinstance(message, dict) and message.get("method") == "initialize" else None
    if not isinstance(params, dict) or not _pulls(params.get("capabilities")):
        return
    root = _root(params)
    settings, problems = client_layer(params.get("initializationOptions"), "initializationOptions")
    if not root or problems:
        return
    from fabric_lsp.documents.cache import Cache, cache_directory
    from fabric_lsp.engine.workspace.workspace import Workspace

    environment = Config.build([settings]).environment_path  # as the session's, before it knows the root
    head.root, head.environment = root, environment
    workspace = Workspace(root, environment)
    configs = Resolver()
    configs.project_root = root
    configs.set_overrides(client_layers(workspace.environment_path, settings))
    head.cache = Cache(cache_directory(configs.for_path(root), root), root, environment)
    jobs = []
    for path in workspace.python_files():
        if check.kind_of(path) is check.Kind.MODULE:
            config = configs.for_path(path).for_file(path)
            job = module_job(path, workspace.text_of(path), config, root, head.cache)
            if job is not None:
                jobs.append(job)
    head.workers = Workers(root, environment, head.logged.append, fork=True)  # forked from this process
    head.workers.submit(jobs, cores())


def _pulls(capabilities: Any) -> bool:
    """Whether the client pulls diagnostics and accepts a refresh (as ``offer_pull_diagnostics``)."""
    if not isinstance(capabilities, dict):
        return False
    text_document, workspace = capabilities.get("textDocument"), capabilities.get("workspace")
    diagnostics = workspace.get("diagnostics") if isinstance(workspace, dict) else None
    return (
        isinstance(text_document, dict)
        and text_document.get("diagnostic") is not None
        and isinstance(diagnostics, dict)
        and bool(diagnostics.get("refreshSupport"))
    )


def _root(params: dict) -> str | None:
    """The workspace's folder, as ``initialize`` takes it: the first folder, else the root."""
    folders = params.get("workspaceFolders")
    uri = folders[0].get("uri") if isinstance(folders, list) and folders and isinstance(folders[0], dict) else None
    uri = uri or params.get("rootUri")
    if isinstance(uri, str) and uri:
        return to_fs_path(uri)
    path = params.get("rootPath")
    return path if isinstance(path, str) and path else None
