"""The analysis engine: source text in, findings out. Knows nothing of LSP, nor of any one rule.

The names below are imported on first use (PEP 562): importing one module of the engine, such as
:mod:`fabric_lsp.engine.findings`, does not import the analyzer and the whole evaluator with it."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fabric_lsp.engine.analyzer import Analysis, Analyzer
    from fabric_lsp.engine.findings import (
        Applicability,
        Certainty,
        Edit,
        Finding,
        Fix,
        Related,
        Severity,
        Span,
        Verdict,
    )

#: each exported name → the module that defines it
_EXPORTS = {
    "Analysis": "fabric_lsp.engine.analyzer",
    "Analyzer": "fabric_lsp.engine.analyzer",
    **{
        name: "fabric_lsp.engine.findings"
        for name in ("Applicability", "Certainty", "Edit", "Finding", "Fix", "Related", "Severity", "Span", "Verdict")
    },
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


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
