"""Parsing that survives half-typed code.

The fast path is :func:`ast.parse`. When the text does not parse, parso's error-recovering parser
(the one jedi uses) tells which statements are broken; those statements are replaced by ``pass``
(same indentation, same number of lines) and the rest is parsed again with ``ast``. A syntax error
in one function therefore hides nothing in another, and every line number stays true.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass, field

from fabric_lsp.engine.python.text import Lines

#: Attempts at blanking broken statements before giving up on the file.
MAX_REPAIRS = 40

_STATEMENT_TYPES = {
    "simple_stmt",
    "expr_stmt",
    "if_stmt",
    "while_stmt",
    "for_stmt",
    "try_stmt",
    "with_stmt",
    "funcdef",
    "classdef",
    "decorated",
    "async_stmt",
    "async_funcdef",
    "match_stmt",
    "error_node",
}


@dataclass
class Parsed:
    tree: ast.Module | None
    lines: Lines
    #: 0-based line numbers whose statements were replaced because they did not parse.
    broken_lines: set[int] = field(default_factory=set)
    error: str | None = None
    #: the text the tree was parsed from, when repairs replaced some statements (same lines)
    repaired: str | None = None

    @property
    def clean(self) -> bool:
        return not self.broken_lines and self.error is None


def _ast_parse(text: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarning for invalid escapes etc.
        return ast.parse(text, type_comments=False)


#: Quick repairs (no parso) tried before the full one.
QUICK_REPAIRS = 3


def parse(text: str) -> Parsed:
    lines = Lines(text)
    try:
        return Parsed(_ast_parse(text), lines)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        first_error = exc
    if isinstance(first_error, SyntaxError):
        quick = _quick_repair(lines, first_error)
        if quick is not None:
            return quick
    return _repair(text, lines, first_error)


def _quick_repair(lines: Lines, error: SyntaxError) -> Parsed | None:
    """The common half-typed keystroke breaks one statement on one or two lines: replace the
    lines ``ast`` names by ``pass`` (a broken block header takes its body with it) and parse
    again — a few ``ast.parse`` calls instead of a parso parse of the whole file."""
    work = [lines.line(i) for i in range(len(lines))]
    blanked: set[int] = set()
    for _ in range(QUICK_REPAIRS):
        first = (error.lineno or 0) - 1
        if not 0 <= first < len(work) or first in blanked:
            return None
        last = max(first, min((getattr(error, "end_lineno", None) or error.lineno or 1) - 1, len(work) - 1))
        indent = lines.indentation(first)
        width = len(indent.expandtabs(8))
        nxt = last + 1  # the more indented lines that follow go too: a body or continuations
        while nxt < len(work):
            content = lines.content(nxt)
            if (
                content.strip()
                and not content.lstrip().startswith("#")
                and len(lines.indentation(nxt).expandtabs(8)) <= width
            ):
                break
            nxt += 1
        while nxt - 1 > last and not lines.content(nxt - 1).strip():
            nxt -= 1
        for i in range(first, nxt):
            line = work[i]
            ending = line[len(line.rstrip("\r\n")) :]
            work[i] = (indent + "pass" + ending) if i == first else ending
            blanked.add(i)
        source = "".join(work)
        try:
            return Parsed(_ast_parse(source), lines, broken_lines=blanked, repaired=source)
        except SyntaxError as exc:
            error = exc
        except (ValueError, RecursionError, MemoryError):
            return None
    return None


def _statement_spans(text: str):
    """(start_line, start_col, end_line) of every statement parso sees, 0-based lines,
    plus the lines parso marks as broken."""
    import parso

    module = parso.parse(text, error_recovery=True)
    spans: list[tuple[int, int, int]] = []
    broken: list[int] = []
    stack = [module]
    while stack:
        node = stack.pop()
        typ = node.type
        if typ in ("error_node", "error_leaf"):
            broken.append(node.start_pos[0] - 1)
        if typ in _STATEMENT_TYPES:
            (l1, c1), (l2, c2) = node.start_pos, node.end_pos
            end = l2 - 1 if c2 > 0 else l2 - 2
            spans.append((l1 - 1, c1, max(end, l1 - 1)))
        children = getattr(node, "children", None)
        if children:
            stack.extend(children)
    return spans, broken


def _repair(text: str, lines: Lines, first_error: BaseException) -> Parsed:
    try:
        spans, broken = _statement_spans(text)
    except Exception as exc:  # parso itself failed: nothing can be said about this file
        return Parsed(None, lines, error=f"cannot parse: {exc}")
    return _Repair(lines, spans).run(broken, first_error)


class _Repair:
    """Blanks broken statements (parso's spans) until ``ast`` parses what is left."""

    def __init__(self, lines: Lines, spans: list[tuple[int, int, int]]) -> None:
        self.lines = lines
        self.spans = spans
        self.work = [lines.line(i) for i in range(len(lines))]
        self.replaced: set[tuple[int, int, int]] = set()
        self.blanked: set[int] = set()

    def innermost(self, line: int, escalate: bool) -> tuple[int, int, int] | None:
        containing = sorted((s for s in self.spans if s[0] <= line <= s[2]), key=lambda s: (s[2] - s[0], -s[1]))
        for span in containing:
            if span in self.replaced:
                continue
            if escalate and any(r[0] <= span[0] and span[2] <= r[2] for r in self.replaced):
                continue
            return span
        return None

    def width(self, i: int) -> int:
        return len(self.lines.indentation(i).expandtabs(8))

    def blank(self, span: tuple[int, int, int]) -> None:
        self.replaced.add(span)
        l1, col, l2 = span
        lines, work = self.lines, self.work
        # a broken block header takes its (more indented) body with it
        base = self.width(l1)
        nxt = l2 + 1
        while nxt < len(work):
            content = lines.content(nxt)
            if content.strip() and not content.lstrip().startswith("#") and self.width(nxt) <= base:
                break
            nxt += 1
        while nxt - 1 > l2 and not lines.content(nxt - 1).strip():
            nxt -= 1
        for i in range(l1, min(nxt - 1, len(work) - 1) + 1):
            line = work[i]
            ending = line[len(line.rstrip("\r\n")) :]
            if i == l1:
                indent = lines.indentation(i)
                work[i] = (indent if col >= len(indent) else indent[:col]) + "pass" + ending
            else:
                work[i] = ending
            self.blanked.add(i)

    def run(self, broken: list[int], first_error: BaseException) -> Parsed:
        for line in sorted(set(broken)):
            span = self.innermost(line, escalate=False)
            if span:
                self.blank(span)
        error: BaseException = first_error
        for _ in range(MAX_REPAIRS):
            source = "".join(self.work)
            try:
                return Parsed(_ast_parse(source), self.lines, broken_lines=self.blanked, repaired=source)
            except (SyntaxError, ValueError) as exc:
                error = exc
                span = self._next(exc)
                if span is None:
                    break
                self.blank(span)
            except (RecursionError, MemoryError) as exc:
                error = exc
                break
        return Parsed(None, self.lines, broken_lines=self.blanked, error=f"cannot parse: {error}")

    def _next(self, exc: BaseException) -> tuple[int, int, int] | None:
        lineno = getattr(exc, "lineno", None)
        if not lineno:
            return None
        return self.innermost(lineno - 1, escalate=(lineno - 1) in self.blanked)
