"""``--format text`` (the default): ruff-like, with the source line, a caret and the fix hint."""

from __future__ import annotations

from fabric_lsp.cli.output import Report, display_path


def _where(r, f, lines):
    """(label, lines) of a finding: in a notebook, ``file:cell N`` and the cell's lines."""
    from fabric_lsp.engine.python.text import Lines

    cell, notebook = f.cell, r.notebook
    if cell is None or notebook is None:
        return r.shown, lines
    return f"{r.shown}:cell {cell + 1}", Lines(notebook.cells[cell].text)


def render_text(report: Report, color: bool = False) -> str:
    from fabric_lsp.engine.python.text import Lines

    out: list[str] = []
    counts = {"error": 0, "warning": 0, "information": 0, "hint": 0}
    fixable = 0

    def c(code: str, s: str) -> str:
        return f"\x1b[{code}m{s}\x1b[0m" if color else s

    for r in report.results:
        if not r.findings:
            continue
        lines = Lines(r.text)
        for f in r.findings:
            shown, source = _where(r, f, lines)
            counts[f.severity.value] += 1
            sev_color = {"error": "31;1", "warning": "33;1"}.get(f.severity.value, "36;1")
            out.append(
                f"{c('1', shown)}:{f.span.start.line + 1}:{f.span.start.col + 1}: "
                f"{c('31', f.code)} [{c(sev_color, f.severity.value)}] {f.message}"
            )
            src = source.content(f.span.start.line).expandtabs(1)
            num = str(f.span.start.line + 1)
            pad = " " * len(num)
            end_col = f.span.end.col if f.span.end.line == f.span.start.line else len(src)
            out.append(f"{pad} |")
            out.append(f"{num} | {src}")
            out.append(f"{pad} | {' ' * f.span.start.col}{c('31', '^' * max(1, end_col - f.span.start.col))}")
            related_cells = f.related_cells or (None,) * len(f.related)
            for rel, rel_cell in zip(f.related, related_cells):
                if rel.path:
                    where = display_path(rel.path)
                else:
                    where = r.shown if rel_cell is None else f"{r.shown}:cell {rel_cell + 1}"
                out.append(f"{pad} = note: {rel.message} ({where}:{rel.span.start.line + 1}:{rel.span.start.col + 1})")
            if f.fix is not None:
                safe = f.fix.applicability.value == "safe"
                hint = "fix with `--fix`" if safe else "unsafe fix, apply with `--fix --unsafe-fixes`"
                out.append(f"{pad} = help: {f.fix.title} [{hint}]")
                fixable += 1 if safe else 0
            out.append("")
    total = sum(counts.values())
    n_files = f"{report.checked} file{'s' if report.checked != 1 else ''}"
    if report.fixed:
        out.append(f"Fixed {report.fixed} problem{'s' if report.fixed != 1 else ''}.")
    if total:
        parts = [f"{n} {k}{'s' if n != 1 and k in ('error', 'warning') else ''}" for k, n in counts.items() if n]
        extra = f" {fixable} fixable with `--fix`." if fixable else ""
        out.append(f"Found {total} problem{'s' if total != 1 else ''} ({', '.join(parts)}) in {n_files}.{extra}")
    elif report.checked:
        out.append(f"All checks passed ({n_files}).")
    return "".join(line + "\n" for line in out)
