"""``--format github``: GitHub Actions workflow commands, one annotation per finding.

``::error file=train.py,line=7,col=13,endLine=7,endColumn=45,title=FAB001::message``; warnings
are ``::warning``, information and hints ``::notice``.
"""

from __future__ import annotations

from fabric_lsp.output import Report

_COMMAND = {"error": "error", "warning": "warning", "information": "notice", "hint": "notice"}


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def render_github(report: Report) -> str:
    lines = []
    for r in report.results:
        path = r.shown.replace("\\", "/")
        for f in r.findings:
            props = ",".join(
                f"{k}={_escape_property(str(v))}"
                for k, v in (
                    ("file", path),
                    ("line", f.span.start.line + 1),
                    ("col", f.span.start.col + 1),
                    ("endLine", f.span.end.line + 1),
                    ("endColumn", f.span.end.col + 1),
                    ("title", f.code),
                )
            )
            lines.append(f"::{_COMMAND[f.severity.value]} {props}::{_escape_data(f.message)}")
    return "".join(line + "\n" for line in lines)
