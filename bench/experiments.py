"""Prototypes of the changes BENCHMARKS.md suggests, patched into fabric-lsp for measurement only.

Not part of fabric-lsp: ``profile_engine.py --fast-repair/--gc off`` and the ``fabric-lsp
(experiment)`` server of ``run.py --experiments`` (launched by ``fabric_lsp_experiment.py``) use
them to show what each suggestion would buy, on the same inputs, in the same run.
"""

from __future__ import annotations

import functools
import gc


def install_fast_repair() -> None:
    """The suggested parse path, patched in for measurement (not the shipped engine): a
    half-typed statement is almost always confined to the line CPython reports, so blanking that
    line and parsing again costs one more ``ast.parse`` instead of a parso parse plus retries."""
    import fabric_lsp.engine.python.modules as M
    import fabric_lsp.engine.python.parse as P

    slow = P.parse

    def parse(text: str):
        lines = P.Lines(text)
        try:
            return P.Parsed(P._ast_parse(text), lines)
        except SyntaxError as exc:
            lineno, end = getattr(exc, "lineno", None), getattr(exc, "end_lineno", None) or getattr(exc, "lineno", None)
        except (ValueError, RecursionError, MemoryError):
            return slow(text)
        if not lineno:
            return slow(text)
        work = text.split("\n")
        first, last = lineno - 1, min(max(end, lineno), len(work)) - 1
        if first >= len(work):
            return slow(text)
        indent = work[first][: len(work[first]) - len(work[first].lstrip())]
        if work[first].rstrip().endswith(":"):
            return slow(text)  # a block header: its body would dangle
        work[first] = indent + "pass"
        for i in range(first + 1, last + 1):
            work[i] = ""
        try:
            tree = P._ast_parse("\n".join(work))
        except (SyntaxError, ValueError):
            return slow(text)
        return P.Parsed(tree, lines, broken_lines=set(range(first, last + 1)))

    P.parse = parse
    M.parse = parse




def install_gc_pause() -> None:
    """Pause the cyclic GC while one analysis runs (ast.parse of a big file allocates ~100 objects
    a line; with the server's heap each full collection it triggers walks every live object)."""
    from fabric_lsp.engine.analyzer import Analyzer

    analyze = Analyzer.analyze

    @functools.wraps(analyze)
    def paused(self, *a, **k):
        was = gc.isenabled()
        gc.disable()
        try:
            return analyze(self, *a, **k)
        finally:
            if was:
                gc.enable()

    Analyzer.analyze = paused
