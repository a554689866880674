"""The analysis engine: source text in, findings out. Knows nothing of LSP, nor of any one rule."""

from fabric_lsp.engine.analyzer import Analysis, Analyzer
from fabric_lsp.engine.findings import Applicability, Certainty, Edit, Finding, Fix, Related, Severity, Span, Verdict

__all__ = [
    "Analysis",
    "Analyzer",
    "Applicability",
    "Certainty",
    "Edit",
    "Finding",
    "Fix",
    "Related",
    "Severity",
    "Span",
    "Verdict",
]
