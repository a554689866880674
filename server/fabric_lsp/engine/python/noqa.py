"""``# noqa`` comments: which codes a line silences, and the edit that adds a code to a line (the
editor's "Disable FABxxx for this line" and ``fabric-lsp check --add-noqa``)."""

from __future__ import annotations

import io
import re
import tokenize

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*))?", re.IGNORECASE)


def noqa_codes(line: str) -> set[str] | None:
    """Codes silenced on ``line``: None when none, an empty set for a bare ``# noqa``."""
    m = _NOQA.search(line)
    if not m:
        return None
    codes = m.group("codes")
    return set() if not codes else {c.strip().upper() for c in codes.split(",")}


def line_edit(content: str, codes: set[str]) -> tuple[int, int, str] | None:
    """(start column, end column, new text) that makes ``content`` silence ``codes`` too; None
    when a bare ``# noqa`` silences everything already."""
    m = _NOQA.search(content)
    present = noqa_codes(content)
    if m is not None and present is not None:
        if not present:
            return None
        return m.start(), m.end(), f"# noqa: {', '.join(sorted(present | codes))}"
    stripped = content.rstrip()
    return len(stripped), len(content), f"  # noqa: {', '.join(sorted(codes))}"


def commentable_lines(text: str) -> set[int] | None:
    """The 0-based lines whose end a comment may follow: not inside a string that goes on to the
    next line, not continued by a backslash. None when the text does not tokenize."""
    lines = text.splitlines()
    blocked: set[int] = {i for i, line in enumerate(lines) if line.rstrip().endswith("\\")}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                blocked.update(range(tok.start[0] - 1, tok.end[0] - 1))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return set(range(len(lines))) - blocked
