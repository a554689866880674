"""Reading and writing the files ``fabric-lsp check`` checks: UTF-8 with or without a BOM, written
back atomically with their permissions."""

from __future__ import annotations

import contextlib
import os


def read_source(path: str) -> tuple[str | None, str | None, bool]:
    """(text, problem, had_bom)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return None, f"cannot read: {exc.strerror or exc}", False
    return decode_source(data)


def decode_source(data: bytes) -> tuple[str | None, str | None, bool]:
    bom = data.startswith(b"\xef\xbb\xbf")
    if bom:
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); skipped", bom
    if "\x00" in text:
        return None, "contains NUL bytes; skipped", bom
    return text, None, bom


def write_atomic(path: str, text: str, bom: bool) -> None:
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")
    import tempfile  # only where a fix writes: a check alone does without it

    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix=".fabric-lsp-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        with contextlib.suppress(OSError):
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
