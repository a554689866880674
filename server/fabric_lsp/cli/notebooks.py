"""``fabric-lsp check`` on ``.ipynb`` files: check the notebook's program, report in cells,
and write fixes back into the notebook's JSON (only the edited cells' sources change)."""

from __future__ import annotations

import difflib
from dataclasses import replace

from fabric_lsp.cli.files import write_atomic
from fabric_lsp.documents import check
from fabric_lsp.documents.notebook import NotebookError, NotebookFile
from fabric_lsp.engine.analyzer import Analyzer


def cell_number(index: int) -> int:
    """How cells are numbered in output: 1-based, counting every cell (as ruff and Jupyter do)."""
    return index + 1


def _in_cells(nb: NotebookFile, findings: list) -> list:
    """Program findings → findings in cell coordinates, each with its ``cell`` (0-based
    index) and ``related_cells``."""
    out: list = []
    for f in findings:
        mapped = nb.program.to_cells(f)
        if mapped is None:
            continue
        out.append(replace(mapped.finding, cell=mapped.cell, related_cells=mapped.related_cells))
    return out


def _diff(nb: NotebookFile, cells: dict[int, str], shown: str) -> str:
    out: list[str] = []
    for index in sorted(cells):
        label = f"{shown}:cell {cell_number(index)}"
        out.extend(
            difflib.unified_diff(
                nb.cells[index].text.splitlines(keepends=True),
                cells[index].splitlines(keepends=True),
                fromfile=f"a/{label}",
                tofile=f"b/{label}",
            )
        )
        if out and not out[-1].endswith("\n"):
            out[-1] += "\n\\ No newline at end of cell\n"
    return "".join(out)


def check_notebook(
    analyzer: Analyzer, raw: str, path: str | None, shown: str, config, mode, bom: bool = False, write: bool = True
):
    """Like :func:`fabric_lsp.cli.checks.check_text`, for the JSON text of a notebook, with the
    analyzer of its configuration."""
    from fabric_lsp.cli.output import FileResult
    from fabric_lsp.engine.fixer import fix_text

    result = FileResult(path or "-", shown, text=raw, checked=True)
    try:
        nb = NotebookFile.parse(raw)
    except NotebookError as exc:
        result.checked = False
        result.problems.append(f"{shown}: error: {exc}; skipped")
        result.fixed_text = None if write or not mode.fix else raw
        return result
    result.notebook = nb
    if mode.fix and not write:
        result.fixed_text = raw
    if nb.program.text.strip() == "":
        return result
    program = nb.program.text
    try:
        if mode.fix or mode.diff:
            fixed = fix_text(
                program, analyzer, path, unsafe=mode.unsafe, transform=lambda fs: nb.program.fixable(config.apply(fs))
            )
            cells = nb.program.changed_cells(fixed.text) if fixed.text != program else {}
            findings = config.apply(fixed.remaining)
            if cells and mode.diff:
                result.diff = _diff(nb, cells, shown)
                findings = check.analysis(analyzer, config, program, path).findings
            elif cells:
                new_raw = nb.with_cells(cells)
                if write and path is not None:
                    write_atomic(path, new_raw, bom)
                else:
                    result.fixed_text = new_raw
                result.fixed = fixed.applied
                nb = NotebookFile.parse(new_raw)
                result.notebook, result.text = nb, new_raw
                findings = check.analysis(analyzer, config, nb.program.text, path).findings
        else:
            findings = check.analysis(analyzer, config, program, path).findings
    except Exception as exc:  # one notebook's internal error is reported, the rest still checked
        result.problems.append(f"{shown}: error: internal error while checking ({type(exc).__name__}: {exc})")
        return result
    result.findings = _in_cells(nb, findings)
    return result


__all__ = ["cell_number", "check_notebook"]
