"""``--format sarif``: a SARIF 2.1.0 log (for GitHub code scanning and other SARIF viewers).

Paths inside the current folder are relative to ``%SRCROOT%`` (the current folder); columns are
counted in Unicode code points (``run.columnKind``), like the rest of fabric-lsp's output.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from fabric_lsp import __version__
from fabric_lsp.cli.output import Report

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/fabric-lsp/fabric-lsp"
_LEVEL = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}


def _artifact(path: str | None, shown: str) -> dict:
    if not path or path == "-":
        return {"uri": "stdin"}
    absolute = os.path.abspath(path)
    cwd = os.getcwd()
    if absolute == cwd or absolute.startswith(cwd.rstrip(os.sep) + os.sep):
        rel = Path(os.path.relpath(absolute, cwd)).as_posix()
        return {"uri": _quote(rel), "uriBaseId": "%SRCROOT%"}
    return {"uri": Path(absolute).as_uri()}


def _quote(rel: str) -> str:
    from urllib.parse import quote

    return quote(rel, safe="/")


def _region(span) -> dict:
    return {
        "startLine": span.start.line + 1,
        "startColumn": span.start.col + 1,
        "endLine": span.end.line + 1,
        "endColumn": span.end.col + 1,
    }


def _notebook_region(r, f, span, cell) -> dict:
    """A region of the ``.ipynb`` file as stored (what a viewer of the file shows) for a span
    in a cell; the cell and the position in it go in ``properties``."""
    from fabric_lsp.engine.findings import Span

    start, end = r.notebook.raw_pos(cell, span.start), r.notebook.raw_pos(cell, span.end)
    region = _region(Span(start, end)) if start is not None and end is not None else {}
    region["properties"] = {"cell": cell + 1, "cellRegion": _region(span)}
    return region


def _rule_descriptor(rule) -> dict:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.summary + "."},
        "help": {"text": rule.summary + f". See {rule.url}", "markdown": rule.markdown()},
        "helpUri": rule.url,
        "defaultConfiguration": {"level": "error"},
        "properties": {"fixable": bool(rule.fixable), "tags": ["lightning", "fabric"]},
    }


def sarif_log(report: Report) -> dict:
    from fabric_lsp.rules import ALL_RULES

    rules = list(ALL_RULES)
    index = {r.code: i for i, r in enumerate(rules)}
    results = []
    for r in report.results:
        artifact = _artifact(r.path, r.shown)
        for f in r.findings:
            cell = f.cell if r.notebook is not None else None
            related_cells = f.related_cells or (None,) * len(f.related)

            def region(span, in_cell, r=r, f=f):
                return _region(span) if in_cell is None else _notebook_region(r, f, span, in_cell)

            result = {
                "ruleId": f.code,
                "level": _LEVEL[f.severity.value],
                "message": {"text": f.message},
                "locations": [{"physicalLocation": {"artifactLocation": artifact, "region": region(f.span, cell)}}],
            }
            if f.code in index:
                result["ruleIndex"] = index[f.code]
            related = []
            for i, (rel, rel_cell) in enumerate(zip(f.related, related_cells)):
                related.append(
                    {
                        "id": i,
                        "message": {"text": rel.message},
                        "physicalLocation": {
                            "artifactLocation": _artifact(rel.path, rel.path) if rel.path else artifact,
                            "region": region(rel.span, rel_cell),
                        },
                    }
                )
            if related:
                result["relatedLocations"] = related
            if f.fix is not None and cell is None:  # a cell's edit is no replacement in the file's JSON
                result["fixes"] = [
                    {
                        "description": {"text": f"{f.fix.title} ({f.fix.applicability.value})"},
                        "artifactChanges": [
                            {
                                "artifactLocation": artifact,
                                "replacements": [
                                    {"deletedRegion": _region(e.span), "insertedContent": {"text": e.new_text}}
                                    for e in f.fix.edits
                                ],
                            }
                        ],
                    }
                ]
            result["properties"] = {"severity": f.severity.value}
            results.append(result)
    notifications = [
        {"level": "error" if ": error:" in p else "warning", "message": {"text": p}} for p in report.problems
    ]
    invocation: dict[str, Any] = {"executionSuccessful": True}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    cwd = os.getcwd()
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "fabric-lsp",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": [_rule_descriptor(r) for r in rules],
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": Path(cwd).as_uri().rstrip("/") + "/"}},
                "invocations": [invocation],
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def render_sarif(report: Report) -> str:
    return json.dumps(sarif_log(report), indent=2, ensure_ascii=False) + "\n"
