"""generated_code.py: the methods dataclasses generate, compiled once and read from a cache. Each
import runs in a fresh interpreter, as a check's does; the code of every generated method must be
the code dataclasses compiles itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

#: imports the engine and the command line (with the dataclasses' cache in argv[1], or plainly
#: without one), saves the cache, and prints how the import went and the shape of every method
#: dataclasses generated for fabric-lsp's classes
IMPORT = r"""
import json, sys, types as pytypes
from fabric_lsp import generated_code
cache = generated_code.cache_dataclasses(sys.argv[1]) if len(sys.argv) > 1 else None
import dataclasses
import fabric_lsp.cli.checks, fabric_lsp.cli.main, fabric_lsp.documents.preload, fabric_lsp.lsp.server
generated_code.save()
counts = {"cached": cache.cached, "compiled": cache.compiled} if cache is not None else {}

def shape(code):
    consts = tuple(shape(c) if isinstance(c, pytypes.CodeType) else repr(c) for c in code.co_consts)
    return [code.co_name, code.co_qualname, code.co_filename, code.co_flags, code.co_firstlineno,
            code.co_argcount, code.co_kwonlyargcount, code.co_varnames, code.co_names,
            code.co_freevars, code.co_cellvars, code.co_code.hex(), code.co_linetable.hex(),
            code.co_exceptiontable.hex(), consts]

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
    return sorted(directory.glob("dataclasses.*.marshal"))


def test_the_cached_code_is_the_code_dataclasses_compiles(tmp_path: Path, plain: dict) -> None:
    first = imported(tmp_path)
    assert first["counts"]["compiled"] > 300  # (a method whose source another has already is "cached")
    assert [p.name for p in cache_files(tmp_path)] == [f"dataclasses.{sys.implementation.cache_tag}.marshal"]
    second = imported(tmp_path)
    assert second["counts"] == {"cached": first["counts"]["cached"] + first["counts"]["compiled"], "compiled": 0}
    assert len(plain) > 300  # __init__, __repr__, __eq__ … of fabric-lsp's dataclasses
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


def test_a_damaged_cache_is_compiled_again_and_mended(tmp_path: Path, plain: dict) -> None:
    imported(tmp_path)
    (written,) = cache_files(tmp_path)
    whole = written.read_bytes()
    for damaged in (b"", whole[:4] + b"\x00" * 8, b"\x00\x00\x00\x00" + whole[4:], whole[: len(whole) // 2]):
        written.write_bytes(damaged)
        again = imported(tmp_path)
        assert again["counts"]["compiled"] > 300 and again["methods"] == plain
        assert imported(tmp_path)["counts"]["compiled"] == 0  # mended by the import that found it damaged


def test_nothing_is_written_where_bytecode_is_not(tmp_path: Path, plain: dict) -> None:
    done = imported(tmp_path, write=False)
    assert done["counts"]["compiled"] > 300 and done["methods"] == plain
    assert cache_files(tmp_path) == []
    unwritable = tmp_path / "file"
    unwritable.write_text("")  # a cache directory that cannot be made: no cache, the import as ever
    assert imported(unwritable / "sub")["methods"] == plain
