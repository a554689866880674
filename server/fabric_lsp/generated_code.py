"""The code that dataclasses and attrs generate for a class's methods, compiled once and cached as
Python caches bytecode.

Both write the source of each class's methods (``__init__``, ``__repr__``, ``__eq__`` …) and
compile it when the class is defined. fabric-lsp defines ~130 dataclasses (~600 methods, ~30 ms
of compiling at every start, a third of importing the engine) and imports ~570 attrs classes of
the protocol's types (~90 ms). A code object depends only on its source, its file name and the
compiler's flags, so the code compiled once is kept in ``__pycache__`` beside fabric-lsp's own
bytecode: one file per cache and interpreter (named by its cache tag, headed by its bytecode's
magic number), read when the cache is first asked, written where a process compiled something it
did not hold — merged with what another process wrote there meanwhile, and never while
``sys.dont_write_bytecode``; a directory that cannot be written only means no cache.

Nothing else changes: the library runs as it does and evaluates the same code in the same
namespace. Its own module imports nothing of fabric-lsp.
"""

from __future__ import annotations
import __future__

import builtins
import contextlib
import marshal
import os
import sys
from importlib.util import MAGIC_NUMBER
from types import CodeType

#: the compiler flags of ``from __future__`` imports (a compiled function carries them in its flags)
FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag
#: the most entries a cache file keeps of what other processes wrote (stale code of a dataclass
#: that was changed since is dropped past it)
MAX_ENTRIES = 5000
#: where the caches are kept: ``__pycache__`` beside this module
DIRECTORY = os.path.join(os.path.dirname(__file__), "__pycache__")


class CodeCache:
    """Compiled code by source, file name and flags, read from ``path`` at the first question."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._table: dict[bytes, bytes] | None = None
        self._new: dict[bytes, bytes] = {}
        self.cached = 0
        self.compiled = 0

    def code(self, source: str, filename: str, flags: int) -> CodeType:
        """The code ``compile(source, filename, "exec", flags, dont_inherit=True)`` gives."""
        import hashlib  # here: not on the path of a check that is replayed

        if self._table is None:
            self._table = read(self.path)
        key = hashlib.blake2b(f"{flags}\0{filename}\0{source}".encode(), digest_size=16).digest()
        code = _loaded(self._table.get(key))
        if code is not None:
            self.cached += 1
            return code
        code = compile(source, filename, "exec", flags=flags, dont_inherit=True)
        self._table[key] = self._new[key] = marshal.dumps(code)
        self.compiled += 1
        return code

    def save(self) -> None:
        """Write what this process compiled, with what the file holds now (unless bytecode is not
        written)."""
        if not self._new or sys.dont_write_bytecode:
            return
        table = read(self.path)
        if len(table) + len(self._new) > MAX_ENTRIES:
            table = {}
        table.update(self._new)
        _write(self.path, table)
        self._new = {}


def cache_file(name: str, directory: str = DIRECTORY) -> str:
    return os.path.join(directory, f"{name}.{sys.implementation.cache_tag}.marshal")


#: the dataclasses' cache of this process, once :func:`cache_dataclasses` is called
_dataclasses: CodeCache | None = None


def cache_dataclasses(directory: str = DIRECTORY) -> CodeCache:
    """From now on in this process, the code of each dataclass's methods comes from the cache in
    ``directory`` (:func:`save` writes what was compiled). ``dataclasses`` compiles a method's
    source with the built-in ``exec`` (3.9–3.13 alike), which it finds among its module's
    globals first."""
    global _dataclasses
    import dataclasses

    if _dataclasses is None:
        cache = CodeCache(cache_file("dataclasses", directory))
        flags = dataclasses.fields.__code__.co_flags & FUTURE_FLAGS  # as the module compiles a string

        def exec(source, globals=None, locals=None, /, **options):  # noqa: A001 - as the built-in it stands for
            if type(source) is str and not options:
                source = cache.code(source, "<string>", flags)
            return builtins.exec(source, globals, locals, **options)

        dataclasses.exec = exec  # type: ignore[attr-defined]
        _dataclasses = cache
    return _dataclasses


def save() -> None:
    """Write the dataclasses' code this process compiled (where it caches it)."""
    if _dataclasses is not None:
        _dataclasses.save()


def read(path: str) -> dict[bytes, bytes]:
    """The cached code by key, or nothing (no file, another interpreter's, or damaged)."""
    try:
        with open(path, "rb") as f:
            if f.read(len(MAGIC_NUMBER)) != MAGIC_NUMBER:
                return {}
            table = marshal.load(f)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(table, dict):
        return {}
    return {k: v for k, v in table.items() if isinstance(k, bytes) and isinstance(v, bytes)}


def _loaded(blob: bytes | None) -> CodeType | None:
    """The code object in ``blob``, or None (none cached, or not one)."""
    if blob is None:
        return None
    try:
        code = marshal.loads(blob)
    except (EOFError, ValueError, TypeError):
        return None
    return code if isinstance(code, CodeType) else None


def _write(path: str, table: dict[bytes, bytes]) -> None:
    """Write ``table`` to ``path`` whole or not at all (another process may be reading it)."""
    import tempfile

    with contextlib.suppress(OSError):
        directory = os.path.dirname(path)
        os.makedirs(directory, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=directory, prefix=".code-", suffix=".tmp")
        try:
            os.chmod(temporary, 0o644)  # as Python's own bytecode: readable by the installation's other users
            with os.fdopen(fd, "wb") as f:
                f.write(MAGIC_NUMBER)
                marshal.dump(table, f)
            os.replace(temporary, path)
        except OSError:
            os.unlink(temporary)
            raise


__all__ = ["CodeCache", "cache_dataclasses", "cache_file", "read", "save"]
