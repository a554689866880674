"""What the session keeps of an analysis: the result of one version of an open document (or a
notebook cell), and ``workspace/diagnostic``'s report of a file that is not open."""

from __future__ import annotations

from dataclasses import dataclass, field

from lsprotocol import types

from fabric_lsp.config import Config
from fabric_lsp.engine.analyzer import Analysis
from fabric_lsp.engine.findings import Finding
from fabric_lsp.engine.python.text import Lines


@dataclass
class Result:
    version: int | None
    text: str
    lines: Lines
    findings: list[Finding]
    #: the analysis of this version: hover reads its verdicts (the diagnostics' own)
    analysis: Analysis | None = None
    diagnostics: list[types.Diagnostic] = field(default_factory=list)
    #: Pull diagnostics' ``resultId``: kept while the diagnostics stay the same.
    result_id: str = ""


@dataclass
class DiskReport:
    """``workspace/diagnostic``'s last report of a file that is not open."""

    stamp: tuple[int, int]  # (mtime_ns, size) of the file analysed
    settings: tuple[Config, Config]  # what it was analysed and reported with (file, session)
    result_id: str
    diagnostics: list[types.Diagnostic]
