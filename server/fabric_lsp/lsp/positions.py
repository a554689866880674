"""The one place that converts between engine positions (code points) and LSP positions in the
negotiated encoding (UTF-16 by default, UTF-8 or UTF-32 when the client offers them)."""

from __future__ import annotations

from lsprotocol import types

from fabric_lsp.engine.findings import Pos, Span
from fabric_lsp.engine.python.text import Lines


class Encoder:
    def __init__(self, encoding: str = "utf-16") -> None:
        self.encoding = str(getattr(encoding, "value", encoding) or "utf-16").lower()

    def _units(self, s: str) -> int:
        if self.encoding == "utf-8":
            return len(s.encode("utf-8", "surrogatepass"))
        if self.encoding == "utf-32":
            return len(s)
        return len(s.encode("utf-16-le", "surrogatepass")) // 2

    def to_lsp(self, lines: Lines, pos: Pos) -> types.Position:
        if pos.line >= len(lines):
            return types.Position(line=pos.line, character=0)
        return types.Position(line=pos.line, character=self._units(lines.content(pos.line)[: pos.col]))

    def range_to_lsp(self, lines: Lines, span: Span) -> types.Range:
        return types.Range(start=self.to_lsp(lines, span.start), end=self.to_lsp(lines, span.end))

    def from_lsp(self, lines: Lines, position: types.Position) -> Pos:
        if position.line >= len(lines):
            return Pos(len(lines), 0)
        text = lines.content(position.line)
        if self.encoding == "utf-32":
            return Pos(position.line, min(position.character, len(text)))
        units = 0
        for i, ch in enumerate(text):
            if units >= position.character:
                return Pos(position.line, i)
            units += self._units(ch)
        return Pos(position.line, len(text))

    def range_from_lsp(self, lines: Lines, rng: types.Range) -> Span:
        return Span(self.from_lsp(lines, rng.start), self.from_lsp(lines, rng.end))
