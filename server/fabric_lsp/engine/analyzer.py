"""Source text → an :class:`Analysis`: the one entry point the CLI and the server share.

The analyzer is handed the rules to run (it never imports ``fabric_lsp.rules``; what a rule is,
:class:`~fabric_lsp.engine.rule.Rule`, and the context it runs in are :mod:`fabric_lsp.engine.rule`); each rule runs
only when its own prefilter matches the text. An analysis holds one verdict per site, computed
once per document version: diagnostics, code actions and hover all read it.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Callable, TypeVar

from fabric_lsp.engine.collector import gc_paused
from fabric_lsp.engine.explanation import render
from fabric_lsp.engine.findings import Certainty, Finding, Pos, Verdict
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.python.noqa import noqa_codes
from fabric_lsp.engine.rule import Rule, RuleContext, TextProbe
from fabric_lsp.engine.semantic import describe
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.engine.workspace.incremental import DocumentMemo, SiteMemo, record, site_key
from fabric_lsp.engine.workspace.workspace import Workspace

#: documents whose last analysis is kept for incremental reuse
MAX_MEMOS = 64
#: between what the rules say in a hover and the configurations of the Fabric there
HOVER_SECTION_BREAK = "\n\n---\n\n"


@dataclass
class Analysis:
    """Everything one version of a document gave: verdicts (one per site), the findings among
    them (noqa applied), and the model the rules asked (for hover away from any site)."""

    text: str
    path: str | None
    verdicts: list[Verdict] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    model: SemanticModel | None = None
    rules: Sequence[Rule] = ()
    #: where a model is made on demand when no rule ran (see :meth:`semantic`)
    workspace: Workspace | None = None

    def verdict_at(self, pos: Pos) -> Verdict | None:
        """The verdict hover shows at ``pos``: of the sites under the cursor, one where a rule
        reports something (several rules may judge the same call), else the first."""
        covering = [v for v in self.verdicts if v.explanation is not None and v.span.start <= pos <= v.span.end]
        reported = [v for v in covering if v.finding is not None]
        chosen = reported or covering
        return chosen[0] if chosen else None

    def hover(self, pos: Pos) -> str | None:
        """Markdown for hover at ``pos``: what the rules say there, then the configurations of
        the Fabric under the cursor (see :mod:`fabric_lsp.engine.semantic.describe`)."""
        parts = [self._rule_hover(pos), self._configurations_at(pos)]
        return HOVER_SECTION_BREAK.join(p for p in parts if p) or None

    def _rule_hover(self, pos: Pos) -> str | None:
        """The verdict of the site under the cursor (the same one the diagnostic shows), else
        what a rule says about the expression there."""
        verdict = self.verdict_at(pos)
        if verdict is not None and verdict.explanation is not None:
            return render(verdict.explanation, self.path)
        if self.model is None:
            return None
        for rule in self.rules:
            try:
                explanation = rule.hover(self.model, pos)
            except RecursionError:
                explanation = None
            if explanation is not None:
                return render(explanation, self.path)
        return None

    def semantic(self) -> SemanticModel | None:
        """The semantic model of this version: the rules' own, else (no rule's prefilter matched)
        one made now, so that hover and inlay hints still describe the document's Fabrics."""
        if self.model is None and self.workspace is not None and "Fabric" in self.text:
            module = ModuleInfo(self.text, self.path, self.workspace.module_name_for(self.path))
            if module.tree is not None:
                self.model = SemanticModel(module, self.workspace)
        return self.model

    def _configurations_at(self, pos: Pos) -> str | None:
        model = self.semantic()
        if model is None:
            return None
        try:
            return describe.hover_at(model, pos)
        except RecursionError:
            return None

    def hints(self) -> list[describe.Hint]:
        """Inlay hints: the configuration of every ``Fabric(...)`` in the document."""
        model = self.semantic()
        if model is None:
            return []
        try:
            return describe.hints(model)
        except RecursionError:
            return []


class Analyzer:
    def __init__(
        self,
        workspace: Workspace | None,
        rules: Sequence[Rule],
        *,
        log: Callable[[str], None] = lambda m: None,
        report_unknown: bool = False,
        lightning_version: str | None = None,
        one_run: bool = False,
    ):
        self.workspace = workspace or Workspace()
        self.rules = list(rules)
        #: the process makes one run (see :func:`gc_paused`)
        self.one_run = one_run
        self.ctx: RuleContext = RuleContext(log=log, report_unknown=report_unknown)
        if lightning_version is not None:
            self.ctx.lightning_version = lightning_version
        self.workspace.log = log
        #: per document path, what its last analysis left for the next (incremental reuse)
        self._memos: dict[str, DocumentMemo] = {}
        self._last_match: tuple[str | None, list[Rule]] = (None, [])
        #: how many site verdicts were computed and how many reused (tests, benchmarks)
        self.stats = {"computed": 0, "reused": 0}

    def analyze(self, text: str, path: str | None = None, *, report_unknown: bool | None = None) -> list[Finding]:
        """Findings for ``text``; ``report_unknown`` overrides the analyzer's setting for this call."""
        return self.analysis(text, path, report_unknown=report_unknown).findings

    def matching(self, text: str) -> list[Rule]:
        """The rules whose prefilters let ``text`` through (remembered for the last text: the
        CLI asks before it hands the same text to :meth:`analysis`)."""
        last_text, last_rules = self._last_match
        if last_text is not text:
            probe = TextProbe(text)
            last_rules = [r for r in self.rules if probe.passes(r.prefilter)]
            self._last_match = (text, last_rules)
        return list(last_rules)

    def analysis(self, text: str, path: str | None = None, *, report_unknown: bool | None = None) -> Analysis:
        rules = self.matching(text)
        if any(r.needs_setups for r in rules) and not self.workspace.setups_may_reach(path, text):
            rules = [r for r in rules if not r.needs_setups]  # asked once, not once per rule
        if not rules:
            return Analysis(text, path, workspace=self.workspace)
        with gc_paused(freeze=self.one_run):
            return on_roomy_stack(lambda: self._analysis(text, path, rules, report_unknown))

    def _analysis(self, text: str, path: str | None, rules: list[Rule], report_unknown: bool | None) -> Analysis:
        module = self.workspace.document_module(text, path)
        if module.tree is None:
            return Analysis(text, path)
        model = SemanticModel(module, self.workspace)
        ctx = self.ctx
        if report_unknown is not None and report_unknown != ctx.report_unknown:
            ctx = replace(ctx, report_unknown=report_unknown)
        # what every verdict may read besides its own statements: the rules and every setting
        memo = DocumentMemo.of(module, (tuple(r.code for r in rules), ctx.settings()))
        previous = self._memos.pop(path, None) if path is not None else None
        if previous is not None and previous.context != memo.context:
            previous = None
        verdicts: list[Verdict] = []
        for rule in rules:
            verdicts.extend(self._run(rule, model, ctx, previous, memo))
        if path is not None:
            self._memos[path] = memo
            while len(self._memos) > MAX_MEMOS:
                self._memos.pop(next(iter(self._memos)))
        verdicts.sort(key=lambda v: (v.span.start, v.code))
        if not ctx.report_unknown:
            verdicts = [_without_unknown(v) for v in verdicts]
        if not module.parsed.clean:
            verdicts = [_without_fix(v) for v in verdicts]
        findings = [v.finding for v in verdicts if v.finding is not None and not _suppressed(module, v.finding)]
        return Analysis(text, path, verdicts, findings, model, rules)

    def _run(
        self, rule: Rule, model: SemanticModel, ctx: RuleContext, previous: DocumentMemo | None, memo: DocumentMemo
    ) -> list[Verdict]:
        """A rule's verdicts, each reused from ``previous`` where still valid, else computed (and
        one failing site is logged and skipped: it never hides the others)."""
        module = model.module
        epoch = self.workspace.epoch_excluding(module.path)
        out: list[Verdict] = []
        for site in rule.sites(model):
            key = site_key(module, rule.code, site)
            site_memo = previous.reuse(key, module, site, epoch) if previous is not None else None
            if site_memo is None:
                self.stats["computed"] += 1
                site_memo = self._compute(rule, model, site, ctx, epoch)
                if site_memo is None:
                    continue
            else:
                self.stats["reused"] += 1
            if key is not None:
                memo.sites[key] = site_memo
            if site_memo.verdict is not None:
                out.append(site_memo.verdict)
        return out

    def _compute(
        self, rule: Rule, model: SemanticModel, site: ast.AST, ctx: RuleContext, epoch: int
    ) -> SiteMemo | None:
        module, inference = model.module, model.inference
        lookups: dict[str, set[str]] = {}
        external_before = inference.external_lookups
        module.lookups = lookups
        try:
            verdict = rule.verdict(model, site, ctx)
        except RecursionError:
            ctx.log(f"{rule.code}: recursion limit at line {site.lineno}; site skipped")
            return None
        except Exception as exc:  # one broken site never hides the others
            ctx.log(f"{rule.code}: inference failed at line {site.lineno}: {type(exc).__name__}: {exc}; site skipped")
            return None
        finally:
            module.lookups = None
        return record(module, site, lookups, inference.external_lookups != external_before, epoch, verdict)


def _without_unknown(verdict: Verdict) -> Verdict:
    """``verdict`` without the hint its rule made where the configuration is not known statically
    (``report-unknown`` off): one policy for every rule."""
    finding = verdict.finding
    if finding is None or finding.certainty is not Certainty.UNKNOWN:
        return verdict
    return replace(verdict, finding=None)


#: why a finding offers no fix in a file that does not parse as it is
NO_FIX_WHILE_BROKEN = "No automatic fix while the file has syntax errors."


def _without_fix(verdict: Verdict) -> Verdict:
    """``verdict`` for a document with syntax errors: a fix is offered only on a file that parses
    as it is (what it would rewrite cannot be checked), whatever the rule found; the verdicts
    themselves are computed as for a clean file and reused across the keystrokes in between."""
    finding = verdict.finding
    if finding is None or finding.fix is None:
        return verdict
    return replace(verdict, finding=replace(finding, fix=None, message=f"{finding.message} {NO_FIX_WHILE_BROKEN}"))


T = TypeVar("T")


def _call(fn: Callable[[], T]) -> T:
    return fn()


#: value-stack slots of :func:`on_roomy_stack`'s frame: 512 KiB, so that its chunk is 1 MiB
ROOMY_SLOTS = 1 << 16
if sys.version_info >= (3, 11):
    # a frame is as big as its code's stack says; the slots are never touched (no page is faulted in)
    _roomy = type(_call)(_call.__code__.replace(co_stacksize=ROOMY_SLOTS), {})
else:  # frames are objects of their own: nothing to make room in
    _roomy = _call


def on_roomy_stack(fn: Callable[[], T]) -> T:
    """``fn()``, its frames in 512 KiB of room. From Python 3.11 frames live in 16 KiB chunks of
    memory that are mapped when a call crosses into the next and unmapped when it returns (CPython
    ``pystate.c``, ``push_chunk``/``_PyThreadState_PopFrame``): the evaluator's recursion, going up
    and down across a chunk's edge, maps and unmaps a chunk thousands of times a file
    (``litgpt/generate/sequentially.py``: 56,821 ``mmap``s of 16 KiB, 0.45 s of system time of a
    1.25 s check). A frame with :data:`ROOMY_SLOTS` slots of value stack gets a chunk of its own
    (the next power of two: 1 MiB), and the frames of ``fn`` fill the other half of it."""
    return _roomy(fn)


def _suppressed(module: ModuleInfo, finding: Finding) -> bool:
    for line in range(finding.span.start.line, finding.span.end.line + 1):
        codes = noqa_codes(module.lines.content(line))
        if codes is not None and (not codes or finding.code in codes):
            return True
    return False
