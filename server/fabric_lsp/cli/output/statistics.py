"""``--statistics``: how many findings per rule, and how many of them are fixable."""

from __future__ import annotations

import json
from collections import Counter

from fabric_lsp.cli.output import Report


def statistics(report: Report) -> list[dict]:
    from fabric_lsp.rules import RULES_BY_CODE

    counts: Counter = Counter()
    fixable: Counter = Counter()
    safe: Counter = Counter()
    for f in report.findings:
        counts[f.code] += 1
        if f.fix is not None:
            fixable[f.code] += 1
            if f.fix.applicability.value == "safe":
                safe[f.code] += 1
    rows = []
    for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        rule = RULES_BY_CODE.get(code)
        rows.append(
            {
                "code": code,
                "name": rule.name if rule else "",
                "count": n,
                "fixable": fixable[code],
                "safe_fixable": safe[code],
            }
        )
    return rows


def render_statistics(report: Report, as_json: bool = False) -> str:
    rows = statistics(report)
    if as_json:
        return json.dumps(rows, indent=2) + "\n"
    if not rows:
        return ""
    width = max(len(str(r["count"])) for r in rows)
    out = []
    for r in rows:
        mark = "[*]" if r["safe_fixable"] else "[-]" if r["fixable"] else "[ ]"
        fix = f"  ({r['fixable']} fixable, {r['safe_fixable']} safely)" if r["fixable"] else ""
        out.append(f"{r['count']:>{width}}\t{r['code']}\t{mark} {r['name']}{fix}")
    total = sum(r["count"] for r in rows)
    fixable = sum(r["safe_fixable"] for r in rows)
    out.append(
        f"Found {total} problem{'s' if total != 1 else ''}."
        + (f" [*] {fixable} fixable with `--fix`." if fixable else "")
    )
    return "\n".join(out) + "\n"
