"""Explanations (hover) rendered as Markdown."""

from __future__ import annotations

import os

from fabric_lsp.engine.findings import Explanation, Located


def _where(item: Located, document: str | None) -> str:
    if item.span is None:
        return ""
    path = item.path or document
    name = os.path.basename(path) if path else "this file"
    return f"{name}:{item.span.start.line + 1}"


def render(explanation: Explanation, document: str | None) -> str:
    lines = [explanation.headline]
    if explanation.items:
        lines.append("")
    for item in explanation.items:
        where = _where(item, document)
        lines.append(f"- {item.text}" + (f" ({where})" if where else ""))
    if explanation.steps:
        lines += ["", "How fabric-lsp got there:"]
        for i, step in enumerate(explanation.steps, 1):
            lines.append(f"{i}. `{step.text}` — {_where(step, document)}")
    return "\n".join(lines)
