"""Text utilities: lines, offsets, the conversion of ``ast``'s UTF-8 byte columns to code-point
columns, and the words and identifiers a text holds (the workspace's word sets, a module's index)."""

from __future__ import annotations

import re

from fabric_lsp.engine.findings import Edit, Pos

_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")
_WORD = re.compile(r"\w+")
_IDENTIFIER = re.compile(r"[^\W\d]\w*")
_DIGITS = "0123456789"
#: every ASCII character that cannot be part of an identifier, mapped to a space
_NON_WORD = {i: " " for i in range(128) if not (chr(i).isalnum() or chr(i) == "_")}


def words(text: str) -> frozenset[str]:
    """The identifier-like words of ``text``, as ``\\w+`` finds them (ASCII text: ``str.translate``
    + ``split``, ~2.5x faster than a regular expression)."""
    return frozenset(text.translate(_NON_WORD).split() if text.isascii() else _WORD.findall(text))


def identifiers(text: str) -> frozenset[str]:
    """The identifiers (and keywords) ``text`` holds, as ``[^\\W\\d]\\w*`` finds them: its
    :func:`words`, a word that begins with digits without them (``x1f`` of ``0x1f``, ``_000`` of
    ``1_000``, nothing of ``42``); ~2x faster than the expression on ASCII text."""
    if not text.isascii():
        return frozenset(_IDENTIFIER.findall(text))
    found = words(text)
    numeric = [w for w in found if w[0] in _DIGITS]
    if not numeric:
        return found
    return (found - frozenset(numeric)) | frozenset(w for w in (n.lstrip(_DIGITS) for n in numeric) if w)


class Lines:
    """The lines of a document, with their terminators kept (CRLF stays CRLF)."""

    def __init__(self, text: str) -> None:
        self.text = text
        # splitlines() would also split on \x0c, \x1c… which Python's tokenizer does not;
        # split on the three real terminators only.
        self.lines: list[str] = [m for m in _LINE_RE.findall(text)]
        if self.lines and self.lines[-1] == "":
            self.lines.pop()
        self.starts: list[int] = []
        off = 0
        for line in self.lines:
            self.starts.append(off)
            off += len(line)
        self._bytes_cache: dict[int, bytes] = {}

    def __len__(self) -> int:
        return len(self.lines)

    def line(self, i: int) -> str:
        return self.lines[i] if 0 <= i < len(self.lines) else ""

    def content(self, i: int) -> str:
        """Line ``i`` without its terminator."""
        return self.line(i).rstrip("\r\n")

    def offset(self, pos: Pos) -> int:
        if pos.line >= len(self.lines):
            return len(self.text)
        return self.starts[pos.line] + pos.col

    def char_col(self, lineno: int, byte_col: int) -> int:
        """``ast`` col_offset (UTF-8 bytes, line 1-based) → code-point column."""
        line = self.line(lineno - 1)
        if line.isascii():
            return byte_col
        raw = self._bytes_cache.get(lineno)
        if raw is None:
            raw = line.encode("utf-8", "surrogatepass")
            self._bytes_cache[lineno] = raw
        return len(raw[:byte_col].decode("utf-8", "replace"))

    def node_start(self, node) -> Pos:
        return Pos(node.lineno - 1, self.char_col(node.lineno, node.col_offset))

    def node_end(self, node) -> Pos:
        return Pos(node.end_lineno - 1, self.char_col(node.end_lineno, node.end_col_offset))

    def segment(self, node) -> str:
        return self.text[self.offset(self.node_start(node)) : self.offset(self.node_end(node))]

    def indentation(self, i: int) -> str:
        line = self.content(i)
        return line[: len(line) - len(line.lstrip(" \t"))]


def apply_edits(text: str, edits) -> str:
    """Apply non-overlapping edits (any order) to ``text``."""
    lines = Lines(text)
    spans = sorted(((lines.offset(e.span.start), lines.offset(e.span.end), e.new_text) for e in edits), reverse=True)
    prev_start = None
    for start, end, new in spans:
        if prev_start is not None and end > prev_start:
            raise ValueError("overlapping edits")
        text = text[:start] + new + text[end:]
        prev_start = start
    return text


__all__ = ["Lines", "apply_edits", "Edit", "Pos"]
