"""generated_code.py: the methods dataclasses and attrs generate, compiled once and read from a
cache. Each import runs in a fresh interpreter, as a check's or the server's does; the code of
every generated method must be the code dataclasses (attrs) compiles itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

#: prints the shape of a code object (every field a compiler flag or a position changes)
SHAPE = r"""
import types as pytypes

def shape(code):
    consts = tuple(shape(c) if isinstance(c, pytypes.CodeType) else repr(c) for c in code.co_consts)
    return [code.co_name, code.co_qualname, code.co_filename, code.co_flags, code.co_firstlineno,
            code.co_argcount, code.co_kwonlyargcount, code.co_varnames, code.co_names,
            code.co_freevars, code.co_cellvars, code.co_code.hex(), code.co_linetable.hex(),
            code.co_exceptiontable.hex(), consts]
"""

#: imports the engine and the command line (with the dataclasses' cache in argv[1], or plainly
#: without one), saves the cache, and prints how the import went and the shape of every method
#: dataclasses generated for fabric-lsp's classes
DATACLASSES = (
    SHAPE
    + r"""
import json, sys
from fabric_lsp import generated_code
cache = generated_code.cache_dataclasses(sys.argv[1]) if len(sys.argv) > 1 else None
import dataclasses
import fabric_lsp.cli.checks, fabric_lsp.cli.main, fabric_lsp.documents.preload, fabric_lsp.lsp.server
generated_code.save()
counts = {"cached": cache.cached, "compiled": cache.compiled} if cache is not None else {}

methods = {}
for name, module in sorted(sys.modules.items()):
    if not name.startswith("fabric_lsp"):
        continue
    for cname, cls in sorted(vars(module).items()):
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == name:
            for attr, f in sorted(vars(cls).items()):
                code = getattr(f, "__code__", None)
                if code is not None and code.co_filename == "<string>":
                    methods[f"{name}.{cname}.{attr}"] = repr(shape(code))
print(json.dumps({"counts": counts, "methods": methods}))
"""
)

#: imports the protocol's types (through the cache in argv[1], or plainly without one) and prints
#: how the import went and the shape of every method attrs generated for them
PROTOCOL = (
    SHAPE
    + r"""
import json, sys
if len(sys.argv) > 1:
    from fabric_lsp.lsp import protocol_import
    done = protocol_import.import_types(sys.argv[1])
    counts = {"cached": done.cached, "compiled": done.compiled}
else:
    import lsprotocol.types
    counts = {}
from lsprotocol import types

methods = {}
for name, cls in sorted(vars(types).items()):
    if isinstance(cls, type) and hasattr(cls, "__attrs_attrs__"):
        for attr, f in sorted(vars(cls).items()):
            code = getattr(f, "__code__", None)
            if code is not None and code.co_filename.startswith("<attrs generated"):
                methods[f"{name}.{attr}"] = repr(shape(code))
print(json.dumps({"counts": counts, "methods": methods}))
"""
)

#: what each cache holds: the script that imports through it, its file's name, the fewest
#: compilations of an import (one a method for dataclasses, one a class for attrs) and the fewest
#: methods it makes (~600 of fabric-lsp's dataclasses, ~1,700 of the protocol's ~570 classes)
KINDS = {
    "dataclasses": (DATACLASSES, "dataclasses", 300, 300),
    "protocol": (PROTOCOL, "lsprotocol-types", 500, 1000),
}


@pytest.fixture(scope="module", params=sorted(KINDS))
def kind(request: pytest.FixtureRequest) -> str:
    return request.param


def imported(kind: str, cache: Path | None, write: bool = True) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if not write:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    argv = [sys.executable, "-c", KINDS[kind][0], *([str(cache)] if cache is not None else [])]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True, timeout=120)
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def plain(kind: str) -> dict:
    return imported(kind, None)["methods"]


def cache_files(kind: str, directory: Path) -> list[Path]:
    return sorted(directory.glob(f"{KINDS[kind][1]}.*.marshal"))


def test_the_cached_code_is_the_code_the_library_compiles(kind: str, tmp_path: Path, plain: dict) -> None:
    _, _, fewest, methods = KINDS[kind]
    first = imported(kind, tmp_path)
    assert first["counts"]["compiled"] > fewest  # (a method whose source another has already is "cached")
    assert [p.name for p in cache_files(kind, tmp_path)] == [f"{KINDS[kind][1]}.{sys.implementation.cache_tag}.marshal"]
    second = imported(kind, tmp_path)
    assert second["counts"] == {"cached": first["counts"]["cached"] + first["counts"]["compiled"], "compiled": 0}
    assert len(plain) > methods  # __init__, __repr__, __eq__ … of each class
    assert first["methods"] == plain
    assert second["methods"] == plain


def test_what_two_processes_compiled_is_kept_together(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A check's main process and its forker each compile the dataclasses of what they import
    and save them: neither drops what the other wrote."""
    from fabric_lsp.generated_code import CodeCache, cache_file

    monkeypatch.setattr(sys, "dont_write_bytecode", False)

    path = cache_file("dataclasses", str(tmp_path))
    one, two = CodeCache(path), CodeCache(path)
    one.code("x = 1\n", "<string>", 0)
    two.code("y = 2\n", "<string>", 0)
    one.save()
    two.save()
    both = CodeCache(path)
    both.code("x = 1\n", "<string>", 0)
    both.code("y = 2\n", "<string>", 0)
    assert (both.cached, both.compiled) == (2, 0)


def test_a_damaged_cache_is_compiled_again_and_mended(kind: str, tmp_path: Path, plain: dict) -> None:
    imported(kind, tmp_path)
    (written,) = cache_files(kind, tmp_path)
    whole = written.read_bytes()
    for damaged in (b"", whole[:4] + b"\x00" * 8, b"\x00\x00\x00\x00" + whole[4:], whole[: len(whole) // 2]):
        written.write_bytes(damaged)
        again = imported(kind, tmp_path)
        assert again["counts"]["compiled"] > KINDS[kind][2] and again["methods"] == plain
        assert imported(kind, tmp_path)["counts"]["compiled"] == 0  # mended by the import that found it damaged


def test_nothing_is_written_where_bytecode_is_not(kind: str, tmp_path: Path, plain: dict) -> None:
    done = imported(kind, tmp_path, write=False)
    assert done["counts"]["compiled"] > KINDS[kind][2] and done["methods"] == plain
    assert cache_files(kind, tmp_path) == []
    unwritable = tmp_path / "file"
    unwritable.write_text("")  # a cache directory that cannot be made: no cache, the import as ever
    assert imported(kind, unwritable / "sub")["methods"] == plain
