"""The analysis engine: source text in, findings out. Knows nothing of LSP."""

from fabric_lsp.engine.model import Applicability, Edit, Finding, Fix, Related, Severity, Span
from fabric_lsp.engine.analyzer import Analyzer, analyze_source

__all__ = [
    "Analyzer",
    "Applicability",
    "Edit",
    "Finding",
    "Fix",
    "Related",
    "Severity",
    "Span",
    "analyze_source",
]
