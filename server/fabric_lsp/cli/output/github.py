"""``--format github``: GitHub Actions workflow commands, one annotation per finding.

``::error file=train.py,line=7,col=13,endLine=7,endColumn=45,title=FAB001::message``; warnings
are ``::warning``, information and hints ``::notice``.
"""

from __future__ import annotations

from fabric_lsp.cli.output import Report

_COMMAND = {"error": "error", "warning": "warning", "information": "notice", "hint": "notice"}


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def _where(r, f):
    """(start, end, message): in a notebook, the annotation points into the ``.ipynb`` file as
    stored (what the pull request's file view shows) and the message names the cell."""
    cell = f.cell if r.notebook is not None else None
    if cell is None:
        return f.span.start, f.span.end, f.message
    start, end = r.notebook.raw_pos(cell, f.span.start), r.notebook.raw_pos(cell, f.span.end)
    label = f"cell {cell + 1}:{f.span.start.line + 1}:{f.span.start.col + 1}: {f.message}"
    if start is None or end is None:
        return f.span.start, f.span.end, label
    return start, end, label


def render_github(report: Report) -> str:
    lines = []
    for r in report.results:
        path = r.shown.replace("\\", "/")
        for f in r.findings:
            start, end, message = _where(r, f)
            props = ",".join(
                f"{k}={_escape_property(str(v))}"
                for k, v in (
                    ("file", path),
                    ("line", start.line + 1),
                    ("col", start.col + 1),
                    ("endLine", end.line + 1),
                    ("endColumn", end.col + 1),
                    ("title", f.code),
                )
            )
            lines.append(f"::{_COMMAND[f.severity.value]} {props}::{_escape_data(message)}")
    return "".join(line + "\n" for line in lines)
