"""Apply fixes to a whole text until none applies (CLI ``--fix`` and the fix-all action)."""

from __future__ import annotations

from dataclasses import dataclass, field

from fabric_lsp.engine.findings import Applicability, Finding
from fabric_lsp.engine.python.text import Lines, apply_edits

MAX_ROUNDS = 10


@dataclass
class FixResult:
    text: str
    applied: int = 0
    remaining: list[Finding] = field(default_factory=list)


def allowed(finding: Finding, unsafe: bool) -> bool:
    return finding.fix is not None and (unsafe or finding.fix.applicability is Applicability.SAFE)


def fix_text(text: str, analyzer, path=None, unsafe: bool = False, transform=None) -> FixResult:
    """Apply fixes until none applies. ``transform`` (e.g. the configuration's rule selection)
    is applied to each round's findings before fixes are chosen."""
    applied = 0
    transform = transform or (lambda findings: findings)
    findings = transform(analyzer.analyze(text, path))
    for _ in range(MAX_ROUNDS):
        chosen: list[Finding] = []
        taken: list[tuple[int, int]] = []
        lines = Lines(text)
        for f in findings:
            if not allowed(f, unsafe):
                continue
            ranges = [(lines.offset(e.span.start), lines.offset(e.span.end)) for e in f.fix.edits]
            if any(s < te and ts < e or (s == e == ts == te) for s, e in ranges for ts, te in taken):
                continue  # overlaps a fix already chosen: next round
            taken += ranges
            chosen.append(f)
        if not chosen:
            break
        new_text = apply_edits(text, [e for f in chosen if f.fix is not None for e in f.fix.edits])
        if new_text == text:
            break
        text = new_text
        applied += len(chosen)
        findings = transform(analyzer.analyze(text, path))
    return FixResult(text, applied, findings)
