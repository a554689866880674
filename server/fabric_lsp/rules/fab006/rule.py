"""FAB006: a checkpoint call (``save``/``load``/``load_raw``) that fails at the first save or load."""

from __future__ import annotations

import ast

from fabric_lsp import facts
from fabric_lsp.engine.findings import Certainty, Explanation, Finding, Located, Severity, Verdict, resolve_severity
from fabric_lsp.engine.lightning.configurations import Scenario
from fabric_lsp.engine.python.values import FabricInst
from fabric_lsp.engine.rule import Rule, RuleContext
from fabric_lsp.engine.semantic.certainty import Judgement, judge, narrow_scenarios
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.rules.fab006.checks import WATCHED, Check, checkpoint_facts, checks_for, lightning_message
from fabric_lsp.rules.fab006.docs import DOC, INVALID, SUMMARY, VALID
from fabric_lsp.rules.fab006.fix import swap_fix
from fabric_lsp.rules.prefilters import PREFILTERS
from fabric_lsp.rules.scenario_text import fabric_lines, scenario_related


class FAB006(Rule):
    code = "FAB006"
    name = "checkpoint-call"
    summary = SUMMARY
    doc = DOC
    valid = VALID
    invalid = INVALID
    fixable = True
    prefilter = PREFILTERS["FAB006"]

    def sites(self, model: SemanticModel) -> list[ast.AST]:
        calls = [c for name in WATCHED for c in model.method_calls(name)]
        calls.sort(key=lambda c: (c.lineno, c.col_offset))
        return list(calls)

    def verdict(self, model: SemanticModel, call: ast.AST, ctx: RuleContext) -> Verdict | None:
        assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
        fabrics, unknown = model.fabrics(call.func.value, by_type=False)
        checks = None
        if not fabrics and unknown:
            # a Fabric known only by its type fails the checks that fail on every configuration,
            # and gives a hint at most on the others: looked for only where it can say something
            checks = checks_for(model, call)
            if ctx.report_unknown or any(check.fails is None for check in checks):
                fabrics, unknown = model.fabrics(call.func.value)
        if not fabrics:
            return None
        scenarios: list[Scenario] | None = None
        best: tuple[Check, Judgement] | None = None
        for check in checks if checks is not None else checks_for(model, call):
            if check.fails is None:
                j = Judgement(Certainty.POSSIBLE if unknown else Certainty.CERTAIN)
            else:
                if scenarios is None:
                    scenarios = [s for f in fabrics for s in model.scenarios(f)]
                    scenarios = narrow_scenarios(model.module, model.inference, call.func.value, call, scenarios)
                j = judge(scenarios, check.fails)
                if j.certainty is Certainty.CERTAIN and unknown:
                    j = j.at_most_possible()
            if j.certainty is None:
                continue
            if best is None or (_rank(j), check.warning_only) < (_rank(best[1]), best[0].warning_only):
                best = (check, j)
        if best is None:
            return Verdict(self.code, model.span(call), None, _explain(model, fabrics, None, Judgement(None)))
        check, j = best
        finding = None
        if j.certainty in (Certainty.CERTAIN, Certainty.POSSIBLE):
            finding = self._finding(model, call, check, j)
        elif j.certainty is Certainty.UNKNOWN:
            finding = self._unknown(model, call, check, j)
        return Verdict(self.code, model.span(call), finding, _explain(model, fabrics, check, j))

    def _finding(self, model: SemanticModel, call: ast.Call, check: Check, j: Judgement) -> Finding:
        certainty = j.certainty or Certainty.POSSIBLE
        head = f"`{model.segment(call.func)}(...)`"
        raised, where = _message(check, j.failing)
        verb = "warns" if check.warning_only else "raises"
        if check.fails is None:
            message = f"{head}: {check.what}; Lightning {verb} at the first checkpoint: {raised} ({where})."
        elif certainty is Certainty.CERTAIN:
            message = f"{head}: {check.what}; under {_strategies(j.failing)} Lightning {verb}: {raised} ({where})."
        else:
            message = (
                f"{head}: {check.what}; if the Fabric is {_strategies(j.failing)}, which this code can choose, "
                f"Lightning {verb}: {raised} ({where})."
            )
        fix = swap_fix(model, call) if check.fails is None and "swapped" in check.what else None
        if "swapped" in check.what and fix is None:
            message += " No automatic fix: the arguments are not a dict display or `.state_dict()` and a path literal."
        severity = resolve_severity(certainty, certain=Severity.WARNING if check.warning_only else Severity.ERROR)
        if check.warning_only:
            severity = Severity.WARNING
        return Finding(
            code=self.code,
            severity=severity,
            message=message,
            span=model.span(call),
            related=tuple(dict.fromkeys(scenario_related(model, j.failing))),
            fix=fix,
            url=self.url,
            certainty=certainty,
        )

    def _unknown(self, model: SemanticModel, call: ast.Call, check: Check, j: Judgement) -> Finding:
        why = j.why_unknown("the strategy's checkpoint arguments are not known statically")
        return self.unknown_finding(
            model,
            call,
            f"If the Fabric's strategy is DeepSpeed, FSDP, ModelParallel or XLAFSDP ({why}), {check.what} fails at the first checkpoint.",
        )


def _rank(j: Judgement) -> int:
    order = {Certainty.CERTAIN: 0, Certainty.POSSIBLE: 1, Certainty.UNKNOWN: 2}
    return order.get(j.certainty, 3) if j.certainty is not None else 3


def _strategies(failing: tuple[Scenario, ...]) -> str:
    names = list(dict.fromkeys(s.outcome.strategy or "?" for s in failing if s.outcome is not None))
    shown = " or ".join(f"`{n}`" for n in names[:2])
    return shown + (f" (and {len(names) - 2} more)" if len(names) > 2 else "") if shown else "the configuration"


def _message(check: Check, failing: tuple[Scenario, ...]) -> tuple[str, str]:
    """Lightning's message (and its 2.6.6 source) for the first failing strategy."""
    if check.kind:
        for s in failing:
            cf = checkpoint_facts(s)
            if cf is not None:
                raised, where = lightning_message(check, cf)
                return raised.rstrip("."), f"lightning/fabric/{where}"
    return check.raised.rstrip("."), f"lightning/fabric/{check.where}"


def _explain(model: SemanticModel, fabrics: list[FabricInst], check: Check | None, j: Judgement) -> Explanation:
    items, steps = fabric_lines(model, fabrics)
    items += [Located(f"fails: {s.describe()}") for s in j.failing]
    items += [Located(f"unknown: {s.describe()}") for s in j.unknown]
    if check is not None and check.fails is None:
        head = (
            "certainly fails under every strategy"
            if j.certainty is Certainty.CERTAIN
            else "fails if the receiver is a Fabric"
        )
    else:
        heads = {
            Certainty.CERTAIN: "certainly fails: on every configuration this code can choose",
            Certainty.POSSIBLE: "possibly fails: for a configuration this code can choose",
            Certainty.UNKNOWN: "the strategy or its checkpoint arguments are not known statically",
        }
        head = heads[j.certainty] if j.certainty is not None else "no configuration this code can choose fails"
    what = check.what if check is not None else "checkpoint call"
    strategies = ", ".join(facts.CHECKPOINT_STRATEGIES)
    items.append(Located(f"strategies that checkpoint through the set-up model: {strategies}"))
    return Explanation(f"**Checkpoint call** — {what}: {head}", tuple(dict.fromkeys(items)), steps)
