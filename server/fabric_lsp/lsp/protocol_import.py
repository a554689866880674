"""The protocol's types (``lsprotocol.types``), imported with the code attrs generates for them
read from a cache.

``lsprotocol.types`` defines ~570 attrs classes. For each, attrs writes the source of its methods
(``__init__``, ``__repr__``, ``__eq__`` …) and compiles it: ~90 ms of the ~220 ms the import
takes, on every start of the server. A code object depends only on its source, its file name and
the compiler's flags, so the server keeps those it compiled as Python keeps bytecode: in
``__pycache__`` beside this module, one file per interpreter (named by its cache tag, headed by
its bytecode's magic number), read when it is there, and written when a method was not in it
(unless ``sys.dont_write_bytecode``; a directory that cannot be written only means no cache).

Nothing else changes: attrs runs as it does and evaluates the same code in the same namespace,
and its own function is back in place once the import is done. Where attrs no longer has the
function this replaces (a release that reorganised it), the import is a plain one.
"""

from __future__ import annotations
import __future__

import contextlib
import hashlib
import importlib.util
import marshal
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable

#: the compiler flags of ``from __future__`` imports (a compiled function carries them in its flags)
_FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag
#: the parameters of the attrs function that compiles and evaluates a generated script
_COMPILE_AND_EVAL = ("script", "globs", "locs", "filename")


@dataclass(frozen=True)
class Imported:
    """How the import went: methods whose code came from the cache, and those compiled."""

    cached: int = 0
    compiled: int = 0


def import_types(directory: str | None = None) -> Imported:
    """Import ``lsprotocol.types``, with attrs' generated code cached in ``directory`` (the
    ``__pycache__`` beside this module by default)."""
    if "lsprotocol.types" in sys.modules:
        return Imported()
    from attr import _make

    original = getattr(_make, "_compile_and_eval", None)
    if original is None or not _replaceable(original):
        import lsprotocol.types  # noqa: F401  (attrs compiles as it always does)

        return Imported()
    path = _cache_file(directory or os.path.join(os.path.dirname(__file__), "__pycache__"))
    known = _read(path)
    used: dict[bytes, bytes] = {}
    compiled: list[bytes] = []
    flags = original.__code__.co_flags & _FUTURE_FLAGS  # as attrs compiles it

    def compile_and_eval(script: str, globs: Any, locs: Any = None, filename: str = "") -> None:
        key = hashlib.blake2b(f"{filename}\0{script}".encode(), digest_size=16).digest()
        code = _loaded(known.get(key))
        if code is None:
            code = compile(script, filename, "exec", flags=flags, dont_inherit=True)
            known[key] = marshal.dumps(code)
            compiled.append(key)
        used[key] = known[key]
        eval(code, globs, locs)

    _make._compile_and_eval = compile_and_eval
    try:
        import lsprotocol.types  # noqa: F401
    finally:
        _make._compile_and_eval = original
    if compiled and not sys.dont_write_bytecode:
        _write(path, used)
    return Imported(cached=len(used) - len(compiled), compiled=len(compiled))


def _replaceable(function: Callable[..., Any]) -> bool:
    code = getattr(function, "__code__", None)
    return code is not None and code.co_varnames[: code.co_argcount] == _COMPILE_AND_EVAL


def _cache_file(directory: str) -> str:
    return os.path.join(directory, f"lsprotocol-types.{sys.implementation.cache_tag}.marshal")


def _read(path: str) -> dict[bytes, bytes]:
    """The cached code by key, or nothing (no file, another interpreter's, or damaged)."""
    try:
        with open(path, "rb") as f:
            if f.read(len(importlib.util.MAGIC_NUMBER)) != importlib.util.MAGIC_NUMBER:
                return {}
            table = marshal.load(f)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(table, dict):
        return {}
    return {k: v for k, v in table.items() if isinstance(k, bytes) and isinstance(v, bytes)}


def _loaded(blob: bytes | None) -> Any:
    """The code object in ``blob``, or None (none cached, or not one)."""
    if blob is None:
        return None
    try:
        code = marshal.loads(blob)
    except (EOFError, ValueError, TypeError):
        return None
    return code if isinstance(code, type(_loaded.__code__)) else None


def _write(path: str, table: dict[bytes, bytes]) -> None:
    """Write ``table`` to ``path`` whole or not at all (another server may be reading it)."""
    import tempfile

    with contextlib.suppress(OSError):
        directory = os.path.dirname(path)
        os.makedirs(directory, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=directory, prefix=".lsprotocol-", suffix=".tmp")
        try:
            os.chmod(temporary, 0o644)  # as Python's own bytecode: readable by the installation's other users
            with os.fdopen(fd, "wb") as f:
                f.write(importlib.util.MAGIC_NUMBER)
                marshal.dump(table, f)
            os.replace(temporary, path)
        except OSError:
            os.unlink(temporary)
            raise
