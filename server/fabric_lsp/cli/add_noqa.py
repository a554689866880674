"""``fabric-lsp check --add-noqa``: a ``# noqa: FABxxx`` comment on the line of every current
finding, so that a team can adopt the tool on a large codebase and catch only new problems.

A comment goes at the end of the finding's last line (codes already silenced there are kept and
the new ones merged in), or of an earlier line of it where the last one ends inside a string or
a backslash continuation. A file whose edited text would not parse is left as it was."""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Callable

from fabric_lsp.engine.python import noqa


def add_noqa(text: str, findings: list) -> tuple[str, int, list[str]]:
    """``text`` with a noqa comment for each finding: (new text, comments added or extended, one
    line per finding that could not get one)."""
    allowed = noqa.commentable_lines(text)
    if allowed is None:
        return text, 0, ["the file does not tokenize"]
    lines = text.splitlines(keepends=True)
    wanted: dict[int, set[str]] = defaultdict(set)
    problems = []
    for f in findings:
        line = next((i for i in range(f.span.end.line, f.span.start.line - 1, -1) if i in allowed), None)
        if line is None or line >= len(lines):
            problems.append(f"{f.code} at line {f.span.start.line + 1}: no line of it can end in a comment")
            continue
        wanted[line].add(f.code)
    added = 0
    for line, codes in wanted.items():
        body = lines[line].rstrip("\r\n")
        ending = lines[line][len(body) :]
        edit = noqa.line_edit(body, codes)
        if edit is None:
            continue
        start, end, new = edit
        lines[line] = body[:start] + new + body[end:] + ending
        added += 1
    new_text = "".join(lines)
    try:
        ast.parse(new_text)
    except SyntaxError:
        return text, 0, ["adding the comments would break the file's syntax; left unchanged"]
    return new_text, added, problems


def add_noqa_to_results(results: list, write: Callable[[str, str], None]) -> tuple[int, list[str]]:
    """Adds the comments to every checked Python file with findings (``write(path, text)``);
    notebooks and batch scripts are named, not edited. Returns (comments added, messages)."""
    total, messages = 0, []
    for r in results:
        if not r.findings:
            continue
        if r.notebook is not None or not r.path.endswith((".py", ".pyi")):
            messages.append(f"{r.shown}: note: --add-noqa edits Python files only; {len(r.findings)} finding(s) left")
            continue
        new_text, added, problems = add_noqa(r.text, r.findings)
        messages += [f"{r.shown}: warning: {p}" for p in problems]
        if added:
            write(r.path, new_text)
            total += added
    return total, messages
