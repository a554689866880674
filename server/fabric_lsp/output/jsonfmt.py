"""``--format json``: a list of ruff-compatible objects (the schema of the foundation issue)."""

from __future__ import annotations

import json

from fabric_lsp.output import Report, display_path


def loc(pos) -> dict:
    return {"row": pos.line + 1, "column": pos.col + 1}


def finding_dict(shown: str, f) -> dict:
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
                "location": loc(r.span.start),
                "end_location": loc(r.span.end),
            }
            for r in f.related
        ],
    }


def render_json(report: Report) -> str:
    out = [finding_dict(r.shown, f) for r in report.results for f in r.findings]
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"
