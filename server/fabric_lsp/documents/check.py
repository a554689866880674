"""One entry per file kind, shared by the command line and the language server.

What kind a file is (a Python module, a notebook, a batch-job script), and its analysis by its
file configuration's analyzer with the findings as that configuration gives them (disabled
rules dropped, each finding's severity decided once, by :meth:`Config.apply`). The CLI and the
server both analyse through :func:`analysis`; a notebook's program is analysed as a module and
mapped to its cells by :mod:`fabric_lsp.documents.notebook`.
"""

from __future__ import annotations

import enum
import os
from dataclasses import replace
from typing import TYPE_CHECKING

from fabric_lsp.config import Config
from fabric_lsp.engine.findings import Finding, Related
from fabric_lsp.facts import BATCH_SCRIPT_SUFFIXES, NOTEBOOK_SUFFIX

if TYPE_CHECKING:  # imported where a file is analysed: telling a file's kind imports no analysis
    from fabric_lsp.engine.analyzer import Analysis, Analyzer


class Kind(enum.Enum):
    MODULE = "module"
    NOTEBOOK = "notebook"
    BATCH_SCRIPT = "batch script"


def kind_of(path: str | None) -> Kind:
    """A file's kind by its name (a text without a path is a module)."""
    name = path.lower() if path is not None else ""
    if name.endswith(NOTEBOOK_SUFFIX):
        return Kind.NOTEBOOK
    if name.endswith(BATCH_SCRIPT_SUFFIXES):
        return Kind.BATCH_SCRIPT
    return Kind.MODULE


def analysis(
    analyzer: Analyzer, config: Config, text: str, path: str | None, skip: frozenset[str] = frozenset()
) -> Analysis:
    """The analysis of one file (or a notebook's program) by its configuration's analyzer,
    findings as ``config`` gives them. A batch script's findings are those of the Python files
    it launches, on its lines (:func:`script_findings`; files in ``skip`` report them already)."""
    if path is not None and kind_of(path) is Kind.BATCH_SCRIPT:
        from fabric_lsp.engine.analyzer import Analysis

        return Analysis(text, path, findings=config.apply(script_findings(analyzer, text, path, skip)))
    result = analyzer.analysis(text, path)
    result.findings = config.apply(result.findings)
    return result


def script_findings(analyzer: Analyzer, text: str, path: str, skip: frozenset[str] = frozenset()) -> list[Finding]:
    """The findings that concern the batch script ``path`` (its text ``text``): the findings of
    the Python files it launches whose related information points into the script, moved onto
    the script's line (the Python side becomes related information). Files in ``skip`` (checked
    in the same run, where the finding is reported already) are left out. Rule-free: any rule
    whose finding names a line of the script is mirrored."""
    from fabric_lsp.engine.program.batch_scripts import launched_files, parse

    script = parse(text, path)
    workspace = analyzer.workspace
    if script is None or not workspace.root:
        return []
    here = os.path.normcase(os.path.abspath(path))
    out: list[Finding] = []
    for python_path in launched_files(workspace, script):
        if python_path in skip:
            continue
        source = workspace.text_of(python_path)
        if source is None:
            continue
        for finding in analyzer.analyze(source, python_path):
            mirrored = _mirrored(finding, here, python_path, workspace.root)
            if mirrored is not None and mirrored not in out:
                out.append(mirrored)
    out.sort(key=lambda f: (f.span.start, f.code))
    return out


def _mirrored(finding: Finding, script_path: str, python_path: str, root: str) -> Finding | None:
    inside = [r for r in finding.related if r.path and os.path.normcase(os.path.abspath(r.path)) == script_path]
    if not inside:
        return None
    shown = os.path.relpath(python_path, root).replace(os.sep, "/")
    related = [Related(f"`{shown}`: the code this script launches", finding.span, python_path)]
    related += [Related(r.message, r.span, None) for r in inside[1:]]
    related += [
        r if r.path is not None else Related(r.message, r.span, python_path) for r in finding.related if r not in inside
    ]
    return replace(finding, span=inside[0].span, related=tuple(related), fix=None)
