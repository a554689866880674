"""``--format json``: a list of ruff-compatible objects (the schema of the foundation issue)."""

from __future__ import annotations

import json

from fabric_lsp.cli.output import Report, display_path


def loc(pos) -> dict:
    return {"row": pos.line + 1, "column": pos.col + 1}


def _cell(index) -> object:
    return None if index is None else index + 1  # 1-based, every cell counted (ruff's "cell")


def finding_dict(shown: str, f) -> dict:
    """One finding; in a notebook (``cell``) positions are in the cell, as ruff's."""
    related_cells = f.related_cells or (None,) * len(f.related)
    fix = None
    if f.fix is not None:
        fix = {
            "applicability": f.fix.applicability.value,
            "message": f.fix.title,
            "edits": [
                {"content": e.new_text, "location": loc(e.span.start), "end_location": loc(e.span.end)}
                for e in f.fix.edits
            ],
        }
    return {
        "cell": _cell(f.cell),
        "filename": shown,
        "code": f.code,
        "message": f.message,
        "severity": f.severity.value,
        "location": loc(f.span.start),
        "end_location": loc(f.span.end),
        "noqa_row": f.span.start.line + 1,
        "fix": fix,
        "url": f.url,
        "related": [
            {
                "message": r.message,
                "filename": display_path(r.path) if r.path else shown,
                "cell": _cell(cell),
                "location": loc(r.span.start),
                "end_location": loc(r.span.end),
            }
            for r, cell in zip(f.related, related_cells)
        ],
    }


def render_json(report: Report) -> str:
    out = [finding_dict(r.shown, f) for r in report.results for f in r.findings]
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"
