"""Jupyter notebooks: the code cells as one program, and findings mapped back to cells.

A notebook is analysed as one program: its Python code cells in order, each followed by a
boundary comment line. IPython syntax (line magics ``%``, shell escapes ``!``, help ``?``) is
replaced line for line by Python the analysis accepts, and a cell that starts with a cell magic
whose body is not Python (``%%bash``, ``%%writefile``…) is left out, like markdown cells and code
cells of other languages. Positions in the program map to (cell, line, column) and back; a cell
line keeps its columns.

Fixes are applied to the program (by the engine's fixer) and split back into cells at the
boundary lines; an edit that spans two cells or touches a replaced IPython line is refused.
:class:`NotebookFile` reads ``.ipynb`` JSON and writes edited cells back by splicing only their
``source`` values into the file's text, so outputs, metadata, ids, key order and indentation
stay byte for byte.

Pure: no LSP, no file system.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from json.decoder import scanstring  # type: ignore[attr-defined]

from fabric_lsp.engine.findings import Edit, Finding, Fix, Pos, Related, Span
from fabric_lsp.engine.python.text import Lines
from fabric_lsp.facts import NOTEBOOK_SUFFIX

#: Cell magics whose body is Python run in the notebook's namespace: the body is analysed.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
_LINE_MAGIC = re.compile(r"^(?P<indent>[ \t]*)(?P<target>[A-Za-z_][\w.]*[ \t]*=[ \t]*)?[%!]")
_HELP = re.compile(r"^[ \t]*(\?{1,2}[\w.]*|[\w.]+\?{1,2})[ \t]*$")
_CELL_MAGIC = re.compile(r"^%%(?P<name>\w+)")
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def is_notebook(path: str | None) -> bool:
    """Whether ``path`` names a Jupyter notebook (what the engine checks to know it is one)."""
    return bool(path) and str(path).lower().endswith(NOTEBOOK_SUFFIX)


class NotebookError(ValueError):
    """A file that is not a notebook fabric-lsp can read; the message is one line."""


@dataclass(frozen=True)
class Cell:
    """A cell as the program sees it. ``index`` is its position among all cells (0-based)."""

    index: int
    text: str
    python: bool


@dataclass(frozen=True)
class _Range:
    index: int  # the cell's position in the notebook
    first: int  # its first program line
    count: int  # its number of program lines (the cell's lines, an empty last one included)
    magic: tuple[int, ...] = ()  # cell lines replaced because they are IPython syntax


@dataclass
class CellFinding:
    """A finding in cell coordinates: ``finding``'s spans (and its fix's edits) are in cell
    ``cell``; ``related_cells[i]`` is the cell of ``finding.related[i]`` (None for another file)."""

    cell: int
    finding: Finding
    related_cells: tuple[int | None, ...] = ()


def cell_lines(text: str) -> list[str]:
    """A cell's lines with their terminators; a text ending in a terminator has an empty last line."""
    lines = _LINES.findall(text)
    if not lines or lines[-1].endswith(("\n", "\r")):
        lines.append("")
    return lines


def _ipython_line(line: str, continued: bool, marker: str) -> str | None:
    """The Python that replaces an IPython line (same indentation), or None for a Python line."""
    body, end = line.rstrip("\r\n"), line[len(line.rstrip("\r\n")) :]
    if continued:
        indent = body[: len(body) - len(body.lstrip(" \t"))]
        return f"{indent}# {marker}{end}"
    m = _LINE_MAGIC.match(body)
    if m is not None:
        value = "None" if m.group("target") else "pass"
        return f"{m.group('indent')}{m.group('target') or ''}{value}  # {marker}{end}"
    if _HELP.match(body):
        indent = body[: len(body) - len(body.lstrip(" \t"))]
        return f"{indent}pass  # {marker}{end}"
    return None


def _python_lines(lines: list[str], marker: str) -> tuple[list[str], tuple[int, ...]]:
    out: list[str] = []
    magic: list[int] = []
    continued = False
    for i, line in enumerate(lines):
        new = _ipython_line(line, continued, marker)
        continued = new is not None and line.rstrip("\r\n").endswith("\\")
        if new is None:
            out.append(line)
        else:
            out.append(new)
            magic.append(i)
    return out, tuple(magic)


def runs_as_python(text: str) -> bool:
    """False for a cell whose cell magic runs something other than Python (``%%bash``…)."""
    m = _CELL_MAGIC.match(text.lstrip("\n"))
    return m is None or m.group("name") in PYTHON_CELL_MAGICS


class Program:
    """The Python code cells of a notebook as one program, with the map between the two."""

    def __init__(self, cells: Sequence[Cell], nonce: str | None = None) -> None:
        everything = "".join(c.text for c in cells)
        self.nonce = nonce or _fresh_nonce(everything)
        self.boundary = f"# fabric-lsp cell boundary {self.nonce}"
        self.marker = f"fabric-lsp ipython {self.nonce}"
        self.cells = {c.index: c for c in cells}
        self.ranges: list[_Range] = []
        self._originals: dict[int, list[str]] = {}
        parts: list[str] = []
        n = 0
        for c in cells:
            if not c.python or not runs_as_python(c.text):
                continue
            lines = cell_lines(c.text)
            python, magic = _python_lines(lines, self.marker)
            self.ranges.append(_Range(c.index, n, len(lines), magic))
            self._originals[c.index] = [lines[i] for i in magic]
            parts.append("".join(python) + "\n" + self.boundary + "\n")
            n += len(lines) + 1
        self.text = "".join(parts)
        self._firsts = [r.first for r in self.ranges]
        self.lines = Lines(self.text)

    # -- positions --------------------------------------------------------------------------
    def _range_at(self, line: int) -> _Range | None:
        i = bisect.bisect_right(self._firsts, line) - 1
        return self.ranges[i] if i >= 0 else None

    def to_cell(self, pos: Pos, *, end: bool = False) -> tuple[int, Pos] | None:
        """(cell index, position in the cell) of a program position; None on a boundary line.
        With ``end``, the start of a boundary line is the end of the cell before it."""
        r = self._range_at(pos.line)
        if r is None:
            return None
        if pos.line < r.first + r.count:
            return r.index, Pos(pos.line - r.first, pos.col)
        if end and pos.line == r.first + r.count and pos.col == 0:
            return r.index, self._cell_end(r.index)
        return None

    def to_program(self, index: int, pos: Pos) -> Pos | None:
        """The program position of a position in cell ``index`` (None if the cell is not in it)."""
        for r in self.ranges:
            if r.index == index:
                return Pos(r.first + min(pos.line, r.count - 1), pos.col)
        return None

    def cell_span(self, span: Span) -> tuple[int, Span] | None:
        start, end = self.to_cell(span.start), self.to_cell(span.end, end=True)
        if start is None or end is None or start[0] != end[0]:
            return None
        return start[0], Span(start[1], end[1])

    def in_program(self, index: int) -> bool:
        return any(r.index == index for r in self.ranges)

    def relabel(self, text: str, name: str) -> str:
        """``text`` (e.g. hover Markdown) with each ``name:LINE`` that points into the program
        rewritten as ``name:cell N:LINE``."""

        def cell_line(m: re.Match) -> str:
            where = self.to_cell(Pos(int(m.group(1)) - 1, 0))
            return m.group(0) if where is None else f"{name}:cell {where[0] + 1}:{where[1].line + 1}"

        return re.sub(re.escape(name) + r":(\d+)\b", cell_line, text)

    # -- findings ---------------------------------------------------------------------------
    def _editable(self, edit: Edit) -> tuple[int, Edit] | None:
        """An edit in cell coordinates; None if it spans cells, touches an IPython line, or
        would join a cell's last line with the boundary."""
        mapped = self.cell_span(edit.span)
        if mapped is None or any(p.col > len(self.lines.content(p.line)) for p in (edit.span.start, edit.span.end)):
            return None
        index, span = mapped
        r = next(r for r in self.ranges if r.index == index)
        if any(span.start.line <= m <= span.end.line for m in r.magic):
            return None
        past_end = edit.span.end.line == r.first + r.count
        if past_end and edit.span.start != edit.span.end and edit.span.start.col != 0:
            return None
        return index, Edit(span, edit.new_text)

    def cell_fix(self, fix: Fix | None) -> tuple[int, Fix] | None:
        """``fix`` in cell coordinates, or None when one of its edits cannot be applied to one cell."""
        if fix is None:
            return None
        edits = [self._editable(e) for e in fix.edits]
        cells = {e[0] for e in edits if e is not None}
        if any(e is None for e in edits) or len(cells) != 1:
            return None
        return cells.pop(), replace(fix, edits=tuple(e[1] for e in edits if e is not None))

    def fixable(self, findings: list[Finding]) -> list[Finding]:
        """The findings with every fix removed that cannot be applied within the finding's own
        cell (for the fixer's ``transform``)."""
        out = []
        for f in findings:
            mapped = self.to_cells(f) if f.fix is not None else None
            out.append(f if f.fix is None or (mapped and mapped.finding.fix) else replace(f, fix=None))
        return out

    def _cell_end(self, index: int) -> Pos:
        lines = cell_lines(self.cells[index].text)
        return Pos(len(lines) - 1, len(lines[-1].rstrip("\r\n")))

    def to_cells(self, finding: Finding) -> CellFinding | None:
        """``finding`` in cell coordinates (a span running past its cell is cut at the cell's
        end); None if it does not start in a cell."""
        start = self.to_cell(finding.span.start)
        if start is None:
            return None
        index = start[0]
        end = self.to_cell(finding.span.end, end=True)
        span = Span(start[1], end[1] if end is not None and end[0] == index else self._cell_end(index))
        related: list[Related] = []
        cells: list[int | None] = []
        for r in finding.related:
            if r.path is not None:
                related.append(r)
                cells.append(None)
                continue
            where = self.cell_span(r.span)
            if where is not None:
                related.append(replace(r, span=where[1]))
                cells.append(where[0])
        fix = self.cell_fix(finding.fix)
        cell_finding = replace(
            finding, span=span, related=tuple(related), fix=fix[1] if fix and fix[0] == index else None
        )
        return CellFinding(index, cell_finding, tuple(cells))

    # -- fixes ------------------------------------------------------------------------------
    def split(self, program: str) -> dict[int, str]:
        """The cells' texts in a fixed version of this program (same boundaries), IPython lines
        restored. Raises ValueError if the boundaries were disturbed."""
        lines = cell_lines(program)
        out: dict[int, str] = {}
        at = 0
        for r in self.ranges:
            try:
                stop = lines.index(self.boundary + "\n", at)
            except ValueError:
                raise ValueError("a fix disturbed the cell boundaries") from None
            body = "".join(lines[at:stop])
            out[r.index] = self._restore(r, body[:-1] if body.endswith("\n") else body)
            at = stop + 1
        if "".join(lines[at:]) != "":
            raise ValueError("a fix wrote past the last cell")
        return out

    def _restore(self, r: _Range, text: str) -> str:
        originals = iter(self._originals[r.index])
        lines = cell_lines(text)
        for i, line in enumerate(lines):
            if line.rstrip("\r\n").endswith(f"# {self.marker}"):
                original = next(originals)
                lines[i] = original.rstrip("\r\n") + line[len(line.rstrip("\r\n")) :]
        return "".join(lines)

    def changed_cells(self, program: str) -> dict[int, str]:
        """The cells whose text differs in a fixed version of the program."""
        return {i: t for i, t in self.split(program).items() if t != self.cells[i].text}


def _fresh_nonce(text: str) -> str:
    import secrets

    while True:
        nonce = secrets.token_hex(6)
        if nonce not in text:
            return nonce


# -- the .ipynb file ------------------------------------------------------------------------
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _ws(raw: str, i: int) -> int:
    m = _WS.match(raw, i)
    return m.end() if m else i


def _members(raw: str, i: int) -> list[tuple[str, int, int]]:
    """(key, value start, value end) of the JSON object at ``raw[i]`` (already validated)."""
    out: list[tuple[str, int, int]] = []
    i = _ws(raw, i + 1)
    while raw[i] == '"':
        key, i = scanstring(raw, i + 1)
        i = _ws(raw, _ws(raw, i) + 1)  # past ':'
        _, end = _DECODER.raw_decode(raw, i)
        out.append((key, i, end))
        i = _ws(raw, end)
        if raw[i] == ",":
            i = _ws(raw, i + 1)
    return out


def _items(raw: str, i: int) -> list[tuple[int, int]]:
    """(start, end) of the items of the JSON array at ``raw[i]``."""
    out: list[tuple[int, int]] = []
    i = _ws(raw, i + 1)
    while raw[i] != "]":
        _, end = _DECODER.raw_decode(raw, i)
        out.append((i, end))
        i = _ws(raw, end)
        if raw[i] == ",":
            i = _ws(raw, i + 1)
    return out


def _string_offsets(raw: str, i: int) -> list[int]:
    """The offset in ``raw`` of each code point of the JSON string literal at ``raw[i]``."""
    out = []
    i += 1
    while raw[i] != '"':
        out.append(i)
        if raw[i] != "\\":
            i += 1
        elif raw[i + 1] != "u":
            i += 2
        else:
            high = 0xD800 <= int(raw[i + 2 : i + 6], 16) < 0xDC00
            i += 12 if high and raw[i + 6 : i + 8] == "\\u" else 6
    return out


def _language(metadata: dict) -> str:
    if not isinstance(metadata, dict):
        return "python"
    info, kernel = metadata.get("language_info"), metadata.get("kernelspec")
    for source, key in ((info, "name"), (kernel, "language")):
        name = source.get(key) if isinstance(source, dict) else None
        if isinstance(name, str) and name:
            return name.lower()
    return "python"


def _cell_language(cell: dict, default: str) -> str:
    meta = cell.get("metadata")
    vscode = meta.get("vscode") if isinstance(meta, dict) else None
    language = vscode.get("languageId") if isinstance(vscode, dict) else None
    return language.lower() if isinstance(language, str) else default


@dataclass
class NotebookFile:
    """An ``.ipynb`` file's text, its cells and where each cell's ``source`` sits in the text."""

    raw: str
    cells: list[Cell]
    kinds: list[str]
    sources: list[tuple[int, int]]  # raw span of each cell's "source" value
    source_is_list: list[bool]
    program: Program = field(init=False)

    def __post_init__(self) -> None:
        self.program = Program(self.cells)
        self._raw_lines = Lines(self.raw)

    @classmethod
    def parse(cls, raw: str) -> NotebookFile:
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise NotebookError(f"not a valid notebook: invalid JSON ({exc})") from None
        if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
            version = data.get("nbformat") if isinstance(data, dict) else None
            if isinstance(version, int) and version < 4:
                raise NotebookError(f"nbformat {version} notebooks are not supported (only nbformat 4)")
            raise NotebookError("not a valid notebook: no `cells` list")
        top = _ws(raw, 0)
        spans = {k: (s, e) for k, s, e in _members(raw, top)}
        language = _language(data.get("metadata") or {})
        items = _items(raw, spans["cells"][0])
        cells, kinds, sources, as_list = [], [], [], []
        for index, (cell, (start, _)) in enumerate(zip(data["cells"], items)):
            if not isinstance(cell, dict) or not isinstance(cell.get("source", ""), (str, list)):
                raise NotebookError(f"not a valid notebook: cell {index + 1} has no `source` text")
            source = cell.get("source", "")
            if isinstance(source, list) and not all(isinstance(s, str) for s in source):
                raise NotebookError(f"not a valid notebook: cell {index + 1} has a `source` that is not text")
            text = source if isinstance(source, str) else "".join(source)
            kind = str(cell.get("cell_type", ""))
            python = kind == "code" and _cell_language(cell, language) == "python"
            cells.append(Cell(index, text, python))
            kinds.append(kind)
            member = {k: (s, e) for k, s, e in _members(raw, start)}.get("source")
            sources.append(member or (-1, -1))
            as_list.append(isinstance(source, list))
        return cls(raw, cells, kinds, sources, as_list)

    # -- positions in the file --------------------------------------------------------------
    def raw_pos(self, index: int, pos: Pos) -> Pos | None:
        """Where a position in cell ``index`` is in the ``.ipynb`` text (0-based line and
        code-point column), for viewers of the file itself (SARIF, GitHub annotations)."""
        start, _ = self.sources[index]
        if start < 0:
            return None
        if self.source_is_list[index]:
            offsets = [o for s, _ in _items(self.raw, start) for o in _string_offsets(self.raw, s)]
        else:
            offsets = _string_offsets(self.raw, start)
        at = (
            Lines(self.cells[index].text).offset(pos)
            if pos.line < len(cell_lines(self.cells[index].text))
            else len(offsets)
        )
        if not offsets:
            return self._raw_at(start)
        return self._raw_at(offsets[at] if at < len(offsets) else offsets[-1] + 1)

    def _raw_at(self, offset: int) -> Pos:
        line = bisect.bisect_right(self._raw_lines.starts, offset) - 1
        return Pos(line, offset - self._raw_lines.starts[line])

    # -- writing ----------------------------------------------------------------------------
    def with_cells(self, texts: dict[int, str]) -> str:
        """The file's text with the given cells' sources replaced, everything else untouched."""
        raw = self.raw
        for index in sorted(texts, reverse=True):
            start, end = self.sources[index]
            if start < 0:
                raise ValueError(f"cell {index + 1} has no source to edit")
            raw = raw[:start] + self._dump(index, texts[index]) + raw[end:]
        return raw

    def _dump(self, index: int, text: str) -> str:
        value: object = re.findall(r"[^\n]*\n|[^\n]+$", text) if self.source_is_list[index] else text
        ascii_only = self.raw.isascii() and bool(re.search(r"\\u(?!00[0-7])[0-9a-fA-F]{4}", self.raw))
        start, _ = self.sources[index]
        line_start = self.raw.rfind("\n", 0, start) + 1
        if line_start == 0 and "\n" not in self.raw.strip():
            separators = (", ", ": ") if re.search(r'"\s*,\s+"', self.raw) else (",", ":")
            return json.dumps(value, ensure_ascii=ascii_only, separators=separators)
        base = self.raw[line_start : _ws(self.raw, line_start)]
        newline = "\r\n" if self.raw[line_start - 2 : line_start] == "\r\n" else "\n"
        after = self.raw[_ws(self.raw, 0) + 1 :]  # the first member's indentation is the unit
        unit = after[len(newline) : _ws(after, len(newline))] if after.startswith(newline) else " "
        return json.dumps(value, ensure_ascii=ascii_only, indent=unit or " ").replace("\n", newline + base)


__all__ = [
    "Cell",
    "CellFinding",
    "NotebookError",
    "NotebookFile",
    "Program",
    "is_notebook",
    "runs_as_python",
]
