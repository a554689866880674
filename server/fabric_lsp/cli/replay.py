"""A check whose inputs have not changed since it last ran prints what it printed then.

A cached run (:mod:`fabric_lsp.documents.cache`) still imports the command line, lists the
project, reads every file and checks each entry's key and look-ups: most of a tenth of a second on
a project whose analysis takes under a second. When a check with the cache ends, it keeps a *run
record* (in the user's cache folder, ``$XDG_CACHE_HOME/fabric-lsp/runs``): its command line,
working folder, interpreter and environment variables (the key), what it printed and its exit
status, and the state of everything its result was read from:

* every folder its walk of the named paths entered, every folder the engine's own listing of the
  project enters (:func:`fabric_lsp.engine.workspace.files.project_folders`) and the folders of
  its configuration files: the names in each, and each file's signature (modification and change
  times, size, inode) — a file added, removed or changed anywhere the check or an analysis looks;
* every file the command's process opened with ``open`` (configuration, ignore files, the files that declare
  the Lightning version, the project's cache itself: a run after the cache is removed is a cold
  one), every module the analyses read (each cache entry's look-ups), fabric-lsp's own files and
  the folders of ``sys.path`` (a package installed or removed);
* the ``pyproject.toml``, ``.gitignore`` and ``.git`` that could appear above those folders.

A file changed within :data:`RACY_NS` before the run is kept by its content's digest (a later
change within the same tick of the file system's clock may not move its times); a run during
which a file it read changed is not kept. The next run with the same key first reads the record
alone (importing nothing of the engine): where every state is as recorded, it prints what was
printed and exits as it did; anything else runs the check. Only checks that print to neither a
terminal, use the cache and the default environment, and neither write files nor read standard
input are recorded (:func:`eligible`, ``fabric_lsp.cli.main._replayable``).
"""

from __future__ import annotations

import builtins
import io
import marshal
import os
import sys
import time
import zlib

from fabric_lsp.own_files import own_files

FORMAT = 2
#: the options of ``check`` that change only what it selects or how it prints (any other: the run
#: writes files, reads standard input, lists instead of checking, or analyses another interpreter)
_REPLAYABLE = frozenset(
    {
        "--select",
        "--extend-select",
        "--ignore",
        "--format",
        "--output-format",
        "--exit-zero",
        "--statistics",
        "-j",
        "--jobs",
        "--root",
        "--cache-dir",
        "--force-exclude",
        "--no-respect-gitignore",
    }
)
#: environment variables that change what a check prints or where it finds modules
_ENVIRONMENT = ("NO_COLOR", "FABRIC_LSP_NO_PROGRESS", "PYTHONPATH", "PYTHONSAFEPATH", "PYTHONHOME", "VIRTUAL_ENV")
#: a file changed this close (nanoseconds) before the run that read it may change again without
#: moving its times: the record keeps its content's digest instead
RACY_NS = 2_000_000_000
#: files whose appearance above the checked folders changes a check (its configuration, its
#: repository's root and ignore files)
_ABOVE = ("pyproject.toml", ".git", ".gitignore")

#: what a path's state is read as (:func:`_read`): "file" its signature (modification and change
#: times, size, inode), "content" its content's digest (a file changed just before the run),
#: "folder" the names in it, "exists" whether it exists (a repository's ``.git``, whose own times
#: move with every git command)
State = tuple  # (kind, path, what was read)


def eligible(argv: list[str]) -> bool:
    """Whether a check with these arguments may be recorded and replayed."""
    if not argv or argv[0] != "check" or os.environ.get("FABRIC_LSP_DEBUG"):
        return False
    if sys.stdout.isatty() or sys.stderr.isatty():
        return False
    return all(not a.startswith("-") or a.split("=", 1)[0] in _REPLAYABLE for a in argv[1:])


def _key(argv: list[str]) -> str:
    environment = [(name, os.environ.get(name)) for name in _ENVIRONMENT]
    return repr((FORMAT, sys.executable, sys.version, sys.path, os.getcwd(), argv, environment))


def _record_path(key: str) -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "fabric-lsp", "runs", f"{zlib.crc32(key.encode('utf-8', 'surrogatepass')):08x}")


def _read(kind: str, path: str) -> object:
    """A path's state as :data:`State` reads it."""
    if kind == "folder":
        try:
            return tuple(sorted(os.listdir(path)))
        except OSError:
            return None
    if kind == "exists":
        return os.path.exists(path)
    if kind == "content":
        import hashlib  # only for a file changed just before its recorded run

        try:
            with open(path, "rb") as fh:
                return hashlib.sha1(fh.read()).hexdigest()
        except OSError:
            return None
    try:
        st = os.stat(path)
    except OSError:
        return ()
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


def replayed(argv: list[str]) -> int | None:
    """Print what the recorded run of ``argv`` printed and return its exit status, where nothing
    it was read from has changed; None where the check has to run."""
    if not eligible(argv):
        return None
    key = _key(argv)
    try:
        with open(_record_path(key), "rb") as fh:
            record = marshal.load(fh)
        recorded_key, states, printed, status = record
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if recorded_key != key or any(_read(kind, path) != state for kind, path, state in states):
        return None
    for which, text in printed:
        stream = sys.stdout if which == 1 else sys.stderr
        stream.write(text)
        stream.flush()
    return int(status)


class _Tee:
    """A text stream that writes through to ``stream`` and keeps what was written in ``parts``
    (shared by standard output and error, in the order written: two streams sent to one file
    replay as they were printed), as (``which``, text)."""

    def __init__(self, stream, which: int, parts: list[tuple[int, str]]) -> None:
        self.stream, self.which, self.parts = stream, which, parts

    def write(self, text: str) -> int:
        self.parts.append((self.which, text))
        return self.stream.write(text)

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


class Recording:
    """A check being recorded: what it prints, and the files its process opens."""

    def __init__(self, argv: list[str]) -> None:
        self.key = _key(argv)
        self.pid = os.getpid()
        self.started = time.time_ns()
        self.opened: set[str] = set()
        self.written: set[str] = set()
        self.printed: list[tuple[int, str]] = []
        self.out, self.err = _Tee(sys.stdout, 1, self.printed), _Tee(sys.stderr, 2, self.printed)
        sys.stdout, sys.stderr = self.out, self.err
        self.closed = False
        global _RECORDING, _OPEN
        if builtins.open is not _open:  # a recording not closed before this one: the same open
            _OPEN = builtins.open
        _RECORDING = self
        builtins.open = io.open = _open  # noted by :func:`_open` until the recording closes

    def note(self, file: object, mode: object) -> None:
        """``open(file, mode)`` was called: a file read or written."""
        if isinstance(file, (str, bytes, os.PathLike)):
            path = os.path.abspath(os.fsdecode(file))
            writes = isinstance(mode, str) and any(c in mode for c in "wax+")
            (self.written if writes else self.opened).add(path)

    def close(self) -> None:
        """Stop recording (what follows is not part of the run: a run that is not kept)."""
        global _RECORDING
        if not self.closed:
            self.closed = True
            sys.stdout, sys.stderr = self.out.stream, self.err.stream
            if _RECORDING is self:
                _RECORDING = None
                builtins.open = io.open = _OPEN

    def went_wrong(self) -> bool:
        """Whether the run reported an internal error (the cache keeps no such result either: the
        next run checks that file again)."""
        return any("internal error" in text for which, text in self.printed if which == 2)

    def keep(self, status: int, folders: list[str], paths: set[str], written: set[str]) -> None:
        """End the recording and keep it: the run printed what was written, exits with ``status``,
        and was read from ``folders`` (the names in each, and its files) and ``paths`` (the modules
        its analyses read) besides the files it opened, and wrote ``written`` besides those it
        opened to write (the cache). Nothing is kept where a file it read changed during the run,
        or the record cannot be written."""
        self.close()
        self.written |= written
        states = _states(folders, (self.opened | paths) - self.written, self.written)
        kept = [_settled(state, self.started) if state[1] not in self.written else state for state in states or ()]
        if states is None or None in kept:
            return
        record = (self.key, kept, self.printed, status)
        path = _record_path(self.key)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as fh:
                marshal.dump(record, fh)
            os.replace(tmp, path)
            _prune(os.path.dirname(path))
        except (OSError, ValueError):
            return


#: at most this many run records are kept (the oldest go first)
MAX_RECORDS = 200


def _prune(folder: str) -> None:
    names = os.listdir(folder)
    if len(names) > MAX_RECORDS:
        paths = sorted((os.path.join(folder, n) for n in names), key=_modified)
        for old in paths[: len(paths) - MAX_RECORDS]:
            os.unlink(old)


def _modified(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


#: the recording under way in this process (the files it opens are noted by :func:`_open`)
_RECORDING: Recording | None = None


#: the ``open`` a recording replaced (called through, and put back when it closes)
_OPEN = builtins.open


def _open(file, mode="r", *args, **kwargs):
    """``open``, noting the file for the recording under way (in its own process: not in a
    worker forked from it)."""
    recording = _RECORDING
    if recording is not None and recording.pid == os.getpid():
        recording.note(file, mode)
    return _OPEN(file, mode, *args, **kwargs)


def _settled(state: State, started: int) -> State | None:
    """A file's state as the record keeps it: its signature; its content's digest where it
    changed within :data:`RACY_NS` before the run (a later change within the same tick of the
    file system's clock may not move its times); None where it changed while the run read it."""
    kind, path, signature = state
    if kind != "file" or not signature:
        return state
    changed = max(signature[0], signature[1])
    if changed >= started:
        return None
    return ("content", path, _read("content", path)) if changed >= started - RACY_NS else state


#: paths whose states say nothing about a check (devices, the kernel's files)
_UNREAD = ("/dev/", "/proc/", "/sys/")


def _states(folders: list[str], read: set[str], written: set[str]) -> list[State] | None:
    """The states of ``folders`` (the names in each, and each file's signature), of the files
    ``read`` and ``written``, of fabric-lsp's own files and ``sys.path``'s folders, and of
    :data:`_ABOVE` in every folder above ``folders``."""
    states: dict[str, tuple[str, object]] = {}
    for folder in folders:
        try:
            with os.scandir(folder) as entries:
                listed = [(entry.name, entry.path, entry.is_dir()) for entry in entries]
        except OSError:
            return None
        states[folder] = ("folder", tuple(sorted(name for name, _, _ in listed)))
        states.update((path, ("file", _read("file", path))) for _, path, is_dir in listed if not is_dir)
    for path in (*own_files(), *read, *written, *(p for p in sys.path if p)):
        if not path.startswith(_UNREAD) and path not in states:
            states[path] = ("file", _read("file", path))
    done = set(folders)
    for folder in folders:
        parent = os.path.dirname(folder)
        while parent not in done:
            done.add(parent)
            for name in _ABOVE:
                full = os.path.join(parent, name)
                states.setdefault(
                    full, ("exists", os.path.exists(full)) if name == ".git" else ("file", _read("file", full))
                )
            up = os.path.dirname(parent)
            if up == parent:
                break
            parent = up
    return [(kind, path, state) for path, (kind, state) in sorted(states.items())]
