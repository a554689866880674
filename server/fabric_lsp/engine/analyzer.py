"""Source text → findings. The one entry point the CLI and the server share."""

from __future__ import annotations

import contextlib
import gc
import re
from dataclasses import replace
from typing import Callable, Optional

from fabric_lsp.engine.infer import Inference
from fabric_lsp.engine.model import Finding
from fabric_lsp.engine.modules import ModuleInfo
from fabric_lsp.engine.workspace import Workspace

#: Files that mention none of these cannot hold a finding: no parse, no inference.
PREFILTER = re.compile(r"setup_optimizers")
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*))?", re.IGNORECASE)


def noqa_codes(line: str) -> Optional[set[str]]:
    """Codes silenced on ``line``: None when none, an empty set for a bare ``# noqa``."""
    m = _NOQA.search(line)
    if not m:
        return None
    codes = m.group("codes")
    return set() if not codes else {c.strip().upper() for c in codes.split(",")}


class Analyzer:
    def __init__(
        self,
        workspace: Optional[Workspace] = None,
        rules=None,
        log: Callable[[str], None] = lambda m: None,
        report_unknown: bool = False,
    ):
        from fabric_lsp.rules import ALL_RULES, RuleContext

        self.workspace = workspace or Workspace()
        self.rules = list(rules) if rules is not None else list(ALL_RULES)
        self.ctx = RuleContext(log=log, report_unknown=report_unknown)
        self.workspace.log = log

    def analyze(self, text: str, path: Optional[str] = None, *, report_unknown: Optional[bool] = None) -> list[Finding]:
        """Findings for ``text``; ``report_unknown`` overrides the analyzer's setting for this call."""
        if not PREFILTER.search(text):
            return []
        with gc_paused():
            return self._analyze(text, path, report_unknown)

    def _analyze(self, text: str, path: Optional[str], report_unknown: Optional[bool]) -> list[Finding]:
        module = ModuleInfo(text, path, self.workspace.module_name_for(path))
        if module.tree is None:
            return []
        inference = Inference(self.workspace)
        findings: list[Finding] = []
        ctx = self.ctx
        if report_unknown is not None and report_unknown != ctx.report_unknown:
            ctx = replace(ctx, report_unknown=report_unknown)
        for rule in self.rules:
            findings.extend(rule.check(module, inference, ctx))
        findings = [f for f in findings if not _suppressed(module, f)]
        findings.sort(key=lambda f: (f.span.start, f.code))
        return findings


    def explain(self, text: str, path: Optional[str], pos) -> Optional[str]:
        """Markdown for hover: the strategy of the Fabric at ``pos`` and how it was inferred."""
        from fabric_lsp.engine.explain import explain

        module = ModuleInfo(text, path, self.workspace.module_name_for(path))
        try:
            return explain(module, Inference(self.workspace), pos)
        except RecursionError:
            return None


@contextlib.contextmanager
def gc_paused():
    """Pause the cyclic garbage collector for one analysis. Parsing a big file allocates ~100 AST
    objects a line and triggers many collections that find nothing to free (the analysis makes
    no cycles that must be collected before it returns): 40-55 % of a large parse."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _suppressed(module: ModuleInfo, finding: Finding) -> bool:
    for line in range(finding.span.start.line, finding.span.end.line + 1):
        codes = noqa_codes(module.lines.content(line))
        if codes is not None and (not codes or finding.code in codes):
            return True
    return False


def analyze_source(text: str, path: Optional[str] = None, workspace: Optional[Workspace] = None) -> list[Finding]:
    return Analyzer(workspace).analyze(text, path)
