"""The protocol's types (``lsprotocol.types``), imported with the code attrs generates for them
read from a cache (:mod:`fabric_lsp.generated_code`).

``lsprotocol.types`` defines ~570 attrs classes. For each, attrs writes the source of its methods
(``__init__``, ``__repr__``, ``__eq__`` …) and compiles it: ~90 ms of the ~220 ms the import
takes, on every start of the server.

Nothing else changes: attrs runs as it does and evaluates the same code in the same namespace,
and its own function is back in place once the import is done. Where attrs no longer has the
function this replaces (a release that reorganised it), the import is a plain one.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Callable

from fabric_lsp.generated_code import DIRECTORY, FUTURE_FLAGS, CodeCache, cache_file

#: the parameters of the attrs function that compiles and evaluates a generated script
_COMPILE_AND_EVAL = ("script", "globs", "locs", "filename")


@dataclass(frozen=True)
class Imported:
    """How the import went: methods whose code came from the cache, and those compiled."""

    cached: int = 0
    compiled: int = 0


def import_types(directory: str | None = None) -> Imported:
    """Import ``lsprotocol.types``, with attrs' generated code cached in ``directory``
    (:data:`fabric_lsp.generated_code.DIRECTORY` by default)."""
    if "lsprotocol.types" in sys.modules:
        return Imported()
    from attr import _make

    original = getattr(_make, "_compile_and_eval", None)
    if original is None or not _replaceable(original):
        import lsprotocol.types  # noqa: F401  (attrs compiles as it always does)

        return Imported()
    cache = CodeCache(cache_file("lsprotocol-types", directory or DIRECTORY))
    flags = original.__code__.co_flags & FUTURE_FLAGS  # as attrs compiles it

    def compile_and_eval(script: str, globs: Any, locs: Any = None, filename: str = "") -> None:
        eval(cache.code(script, filename, flags), globs, locs)

    _make._compile_and_eval = compile_and_eval
    try:
        import lsprotocol.types  # noqa: F401
    finally:
        _make._compile_and_eval = original
    cache.save()
    return Imported(cached=cache.cached, compiled=cache.compiled)


def _replaceable(function: Callable[..., Any]) -> bool:
    code = getattr(function, "__code__", None)
    return code is not None and code.co_varnames[: code.co_argcount] == _COMPILE_AND_EVAL
