"""Output formats of ``fabric-lsp check``: text, json, sarif, github, and ``--statistics``.

Every renderer takes a :class:`Report` and returns the whole output as one string, so that the
CLI can write it to stdout or, in one piece, to ``--output-file``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from fabric_lsp.cli import FORMATS


@dataclass
class FileResult:
    path: str  # absolute path (or "-" for stdin without --stdin-filename)
    shown: str  # the path as displayed: relative to the current folder when inside it
    text: str = ""
    findings: list = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    fixed: int = 0
    diff: str = ""
    fixed_text: str | None = None  # --fix on stdin: the fixed source
    checked: bool = False
    notebook: Any = None  # a fabric_lsp.documents.notebook.NotebookFile: the findings are in its cells
    #: what the check looked up (engine.workspace.dependencies.Dependencies): the cache keeps it
    deps: Any = None
    #: for the cache, the files that mention words it looked up (documents.cache.answers)
    mentioned: dict = field(default_factory=dict)


@dataclass
class Report:
    results: list[FileResult] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # one-line messages about inputs
    checked: int = 0

    @property
    def with_findings(self) -> list[FileResult]:
        return [r for r in self.results if r.findings]

    @property
    def findings(self) -> list:
        return [f for r in self.results for f in r.findings]

    @property
    def fixed(self) -> int:
        return sum(r.fixed for r in self.results)


def display_path(path: str | None) -> str:
    if not path or path == "-":
        return "-"
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def render(fmt: str, report: Report, *, color: bool = False, statistics: bool = False) -> str:
    if statistics:
        from fabric_lsp.cli.output.statistics import render_statistics

        return render_statistics(report, as_json=fmt == "json")
    if fmt == "json":
        from fabric_lsp.cli.output.jsonfmt import render_json

        return render_json(report)
    if fmt == "sarif":
        from fabric_lsp.cli.output.sarif import render_sarif

        return render_sarif(report)
    if fmt == "github":
        from fabric_lsp.cli.output.github import render_github

        return render_github(report)
    from fabric_lsp.cli.output.text import render_text

    return render_text(report, color=color)


__all__ = ["FORMATS", "FileResult", "Report", "display_path", "render"]
