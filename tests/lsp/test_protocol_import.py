"""lsp/protocol_import.py: the protocol's types imported with attrs' generated code from a cache.
Each import runs in a fresh interpreter, as the server's does; the code of every generated method
must be the code attrs compiles itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

#: imports the protocol's types (through the cache in argv[1], or plainly without one) and prints
#: how the import went and the shape of every method attrs generated for them
IMPORT = r"""
import json, sys, types as pytypes
if len(sys.argv) > 1:
    from fabric_lsp.lsp import protocol_import
    done = protocol_import.import_types(sys.argv[1])
    counts = {"cached": done.cached, "compiled": done.compiled}
else:
    import lsprotocol.types
    counts = {}
from lsprotocol import types

def shape(code):
    consts = tuple(shape(c) if isinstance(c, pytypes.CodeType) else repr(c) for c in code.co_consts)
    return [code.co_name, code.co_qualname, code.co_filename, code.co_flags, code.co_firstlineno,
            code.co_argcount, code.co_kwonlyargcount, code.co_varnames, code.co_names,
            code.co_freevars, code.co_cellvars, code.co_code.hex(), code.co_linetable.hex(),
            code.co_exceptiontable.hex(), consts]

methods = {}
for name, cls in sorted(vars(types).items()):
    if isinstance(cls, type) and hasattr(cls, "__attrs_attrs__"):
        for attr, f in sorted(vars(cls).items()):
            code = getattr(f, "__code__", None)
            if code is not None and code.co_filename.startswith("<attrs generated"):
                methods[f"{name}.{attr}"] = repr(shape(code))
print(json.dumps({"counts": counts, "methods": methods}))
"""


def imported(cache: Path | None, write: bool = True) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if not write:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    argv = [sys.executable, "-c", IMPORT, *([str(cache)] if cache is not None else [])]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True, timeout=120)
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def plain() -> dict:
    return imported(None)["methods"]


def cache_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("lsprotocol-types.*.marshal"))


def test_the_cached_code_is_the_code_attrs_compiles(tmp_path: Path, plain: dict) -> None:
    first = imported(tmp_path)
    assert first["counts"]["cached"] == 0 and first["counts"]["compiled"] > 500
    assert [p.name for p in cache_files(tmp_path)] == [f"lsprotocol-types.{sys.implementation.cache_tag}.marshal"]
    second = imported(tmp_path)
    assert second["counts"] == {"cached": first["counts"]["compiled"], "compiled": 0}
    assert len(plain) > 1000  # __init__, __repr__, __eq__ … of ~570 classes
    assert first["methods"] == plain
    assert second["methods"] == plain


def test_a_damaged_cache_is_compiled_again_and_mended(tmp_path: Path, plain: dict) -> None:
    imported(tmp_path)
    (written,) = cache_files(tmp_path)
    whole = written.read_bytes()
    for damaged in (b"", whole[:4] + b"\x00" * 8, b"\x00\x00\x00\x00" + whole[4:], whole[: len(whole) // 2]):
        written.write_bytes(damaged)
        again = imported(tmp_path)
        assert again["counts"]["cached"] == 0 and again["methods"] == plain
        assert imported(tmp_path)["counts"]["compiled"] == 0  # mended by the import that found it damaged


def test_nothing_is_written_where_bytecode_is_not(tmp_path: Path, plain: dict) -> None:
    done = imported(tmp_path, write=False)
    assert done["counts"]["cached"] == 0 and done["methods"] == plain
    assert cache_files(tmp_path) == []
    unwritable = tmp_path / "file"
    unwritable.write_text("")  # a cache directory that cannot be made: no cache, the import as ever
    assert imported(unwritable / "sub")["methods"] == plain
