"""FAB005: DeepSpeed's contract — calls that DeepSpeed under Fabric does not support."""

from __future__ import annotations

import ast

from fabric_lsp.engine.findings import (
    Applicability,
    Certainty,
    Edit,
    Explanation,
    Finding,
    Fix,
    Located,
    Related,
    Severity,
    Span,
    Verdict,
    resolve_severity,
)
from fabric_lsp.engine.program.setups import relevant_setups
from fabric_lsp.engine.python.values import FabricInst
from fabric_lsp.engine.rule import Rule, RuleContext
from fabric_lsp.engine.semantic.certainty import Judgement, judge, narrow_scenarios
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.facts import Kind
from fabric_lsp.rules.fab005.checks import WATCHED, Check, check_for
from fabric_lsp.rules.fab005.docs import DOC, INVALID, SUMMARY, VALID
from fabric_lsp.rules.prefilters import PREFILTERS
from fabric_lsp.rules.scenario_text import describe_failing, fabric_lines, scenario_related


def _tensor_backward(call: ast.Call) -> bool:
    """``loss.backward()``, ``loss.backward(retain_graph=True)``: a tensor's backward, never
    ``Fabric.backward(tensor, ...)``, which needs the tensor (FAB004 watches these)."""
    return call.func.attr == "backward" and not call.args and all(k.arg != "tensor" for k in call.keywords)  # type: ignore[attr-defined]


class FAB005(Rule):
    code = "FAB005"
    name = "deepspeed-contract"
    summary = SUMMARY
    doc = DOC
    valid = VALID
    invalid = INVALID
    fixable = True
    # a tensor's own ``loss.backward()`` (no argument) is not ``Fabric.backward(tensor)``
    prefilter = PREFILTERS["FAB005"]

    def sites(self, model: SemanticModel) -> list[ast.AST]:
        calls: list[ast.Call] = [c for name in WATCHED for c in model.method_calls(name) if not _tensor_backward(c)]
        calls.sort(key=_position)
        return list(calls)

    def verdict(self, model: SemanticModel, call: ast.AST, ctx: RuleContext) -> Verdict | None:
        assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
        # a Fabric known only by its type gives a hint at most: looked for only when one is wanted
        fabrics, unknown = model.fabrics(call.func.value, by_type=ctx.report_unknown)
        if not fabrics:
            return None
        check = check_for(model, call, fabrics)
        if check is None:
            return None
        if not any(c.kind in (None, Kind.DEEPSPEED) for f in fabrics for c in f.choices):
            # every check is DeepSpeed's: a Fabric that is never DeepSpeed fails none (its
            # strategies, known at its construction, settle it before the costlier scenarios)
            return Verdict(self.code, model.span(call), None, _explain(model, fabrics, check, judge([], check.fails)))
        scenarios = [s for f in fabrics for s in model.scenarios(f)]
        scenarios = narrow_scenarios(model.module, model.inference, call.func.value, call, scenarios)
        j = judge(scenarios, check.fails)
        if j.certainty is Certainty.CERTAIN and (unknown or check.conditional):
            j = j.at_most_possible()
        finding = None
        if j.certainty in (Certainty.CERTAIN, Certainty.POSSIBLE):
            finding = self._finding(model, call, fabrics, check, j)
        elif j.certainty is Certainty.UNKNOWN:
            finding = self._unknown(model, call, check, j)
        return Verdict(self.code, model.span(call), finding, _explain(model, fabrics, check, j))

    def _finding(
        self, model: SemanticModel, call: ast.Call, fabrics: list[FabricInst], check: Check, j: Judgement
    ) -> Finding:
        certainty = j.certainty or Certainty.POSSIBLE
        method = _method(call)
        rcv = model.segment(method.value)
        verb = "warns" if check.warning_only else "raises"
        where = describe_failing(j.failing)
        raised = check.raised.rstrip(".")
        if certainty is Certainty.CERTAIN:
            message = f"`{rcv}.{method.attr}(...)` {verb} under {where} ({check.what}): {raised}."
        else:
            message = f"`{rcv}.{method.attr}(...)` {verb} if the Fabric is {where}, which this code can choose ({check.what}): {raised}."
        fix = None
        if method.attr == "backward":
            fix, reason = _model_fix(model, call)
            if fix is None:
                message += f" No automatic fix: {reason}."
        related = scenario_related(model, j.failing)
        if method.attr == "backward":
            related += [
                Related("Model set up here", model.span(c))
                for c in relevant_setups(model.setups, call, call.args[0], model.module, fabrics)
            ]
        certain_severity = Severity.WARNING if check.warning_only else Severity.ERROR
        return Finding(
            code=self.code,
            severity=resolve_severity(certainty, certain=certain_severity),
            message=message,
            span=model.span(call),
            related=tuple(dict.fromkeys(related)),
            fix=fix,
            url=self.url,
            certainty=certainty,
        )

    def _unknown(self, model: SemanticModel, call: ast.Call, check: Check, j: Judgement) -> Finding:
        why = j.why_unknown("the ZeRO stage is not known statically")
        return self.unknown_finding(
            model, call, f"If the Fabric's strategy is DeepSpeed ({why}), {check.what} fails: {check.raised}"
        )


def _position(call: ast.Call) -> tuple[int, int]:
    return call.lineno, call.col_offset


def _method(call: ast.Call) -> ast.Attribute:
    assert isinstance(call.func, ast.Attribute)
    return call.func


def _model_fix(model: SemanticModel, call: ast.Call) -> tuple[Fix | None, str]:
    """``backward(loss)`` → ``backward(loss, model=m)`` when exactly one set-up model computes
    ``loss`` and it is named in this function."""
    uses = model.models_computing(call.args[0])
    setups = {id(u.setup.call) for u in uses}
    if len(setups) != 1:
        return (
            None,
            f"{'no' if not setups else 'more than one'} set-up model is seen computing the loss: pass `model=` by hand",
        )
    scope = model.module.scope_of(call)
    named = [u for u in uses if u.module is model.module and u.direct and model.module.scope_of(u.use) is scope]
    texts = {model.segment(u.expr) for u in named}
    if len(texts) != 1:
        return None, "the model computing the loss is not named in this function: pass `model=` by hand"
    end = max(model.span(a).end for a in [*call.args, *(k.value for k in call.keywords)])
    edit = Edit(Span(end, end), f", model={texts.pop()}")
    return Fix("Pass the model that computes the loss (`model=`)", Applicability.SAFE, (edit,)), ""


def _explain(model: SemanticModel, fabrics: list[FabricInst], check: Check, j: Judgement) -> Explanation:
    items, steps = fabric_lines(model, fabrics)
    items += [Located(f"fails: {s.describe()}") for s in j.failing]
    items += [Located(f"unknown: {s.describe()}") for s in j.unknown]
    heads = {
        Certainty.CERTAIN: "certainly fails: on every configuration this code can choose",
        Certainty.POSSIBLE: "possibly fails: for a configuration this code can choose",
        Certainty.UNKNOWN: "the strategy or ZeRO stage is not known statically",
    }
    head = heads[j.certainty] if j.certainty is not None else "no configuration this code can choose fails"
    return Explanation(f"**DeepSpeed's contract** — {check.what}: {head}", tuple(dict.fromkeys(items)), steps)
