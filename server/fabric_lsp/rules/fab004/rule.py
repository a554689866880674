"""FAB004: ``loss.backward()`` where the Fabric's precision or strategy requires ``fabric.backward(loss)``."""

from __future__ import annotations

import ast

from fabric_lsp import facts
from fabric_lsp.engine.findings import (
    Applicability,
    Certainty,
    Edit,
    Explanation,
    Finding,
    Fix,
    Located,
    Related,
    Verdict,
    resolve_severity,
)
from fabric_lsp.engine.lightning.configurations import Scenario
from fabric_lsp.engine.program.setups import ModelUse, fabric_in_scope, origin_key, relevant_setups
from fabric_lsp.engine.python.values import FabricInst
from fabric_lsp.engine.rule import Rule, RuleContext
from fabric_lsp.engine.semantic.certainty import Judgement, judge
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.rules.fab004.docs import DOC, INVALID, SUMMARY, VALID
from fabric_lsp.rules.prefilters import PREFILTERS
from fabric_lsp.rules.scenario_text import describe_failing, fabric_lines, scenario_related

LIGHTNING_MESSAGE = "The current strategy and precision selection requires you to call `fabric.backward(loss)` instead of `loss.backward()`."


def _fails(s: Scenario) -> bool | None:
    assert s.outcome is not None
    return facts.precision_plugin_requires_fabric_backward(s.outcome.precision_plugin)


class FAB004(Rule):
    code = "FAB004"
    name = "backward-bypasses-fabric"
    summary = SUMMARY
    doc = DOC
    valid = VALID
    invalid = INVALID
    fixable = True
    prefilter = PREFILTERS["FAB004"]
    needs_setups = True

    def sites(self, model: SemanticModel) -> list[ast.AST]:
        return list(model.method_calls("backward"))

    def verdict(self, model: SemanticModel, call: ast.AST, ctx: RuleContext) -> Verdict | None:
        assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
        if not facts.has_feature("backward_check", ctx.lightning_version):
            return None
        tensor = call.func.value
        uses = model.models_computing(tensor)
        if not uses:
            return None  # not a set-up model's output: nothing to evaluate
        if any(isinstance(v, FabricInst) for v in model.values(tensor)):
            return None  # `fabric.backward(...)`: asked before jedi is
        if model.set_up_models(tensor) or model.fabrics(tensor)[0]:
            return None  # `model.backward`/`fabric.backward`
        fabrics = _fabrics(uses)
        scenarios = [s for f in fabrics for s in model.scenarios(f)]
        judgement = judge(scenarios, _fails)
        if judgement.certainty is Certainty.CERTAIN and any(u.setup.unknown for u in uses):
            judgement = judgement.at_most_possible()
        explanation = _explain(model, uses, fabrics, judgement)
        finding = None
        if judgement.certainty in (Certainty.CERTAIN, Certainty.POSSIBLE):
            finding = self._finding(model, call, uses, fabrics, judgement)
        elif judgement.certainty is Certainty.UNKNOWN:
            finding = self._unknown(model, call, judgement)
        return Verdict(self.code, model.span(call), finding, explanation)

    def _finding(
        self, model: SemanticModel, call: ast.Call, uses: list[ModelUse], fabrics: list[FabricInst], j: Judgement
    ) -> Finding:
        tensor = model.segment(_receiver(call))
        models = ", ".join(dict.fromkeys(f"`{model_text(u)}`" for u in uses))
        why = describe_failing(j.failing)
        if j.certainty is Certainty.CERTAIN:
            message = (
                f"`{_called(call, tensor)}.backward()` raises RuntimeError: {why} requires `fabric.backward(...)`, and "
                f"`{tensor}` is computed by the set-up model {models}."
            )
        else:
            message = (
                f"`{_called(call, tensor)}.backward()` raises RuntimeError if {why}, which this code can choose: "
                f"`{tensor}` is computed by the set-up model {models}; call `fabric.backward(...)`."
            )
        fix, reason = _fix(model, call, uses, fabrics)
        if fix is None:
            message += f" No automatic fix: {reason}."
        related = [Related("Set-up model used here", model.span(u.use)) for u in uses if u.module is model.module]
        related += [
            Related("Model set up here", u.setup.module.span(u.setup.call), _path(model, u.setup.module.path))
            for u in uses
        ]
        related += scenario_related(model, j.failing)
        return Finding(
            code=self.code,
            severity=resolve_severity(j.certainty or Certainty.POSSIBLE),
            message=message,
            span=model.span(call),
            related=tuple(dict.fromkeys(related)),
            fix=fix,
            url=self.url,
            certainty=j.certainty or Certainty.POSSIBLE,
        )

    def _unknown(self, model: SemanticModel, call: ast.Call, j: Judgement) -> Finding:
        tensor = model.segment(_receiver(call))
        why = j.why_unknown("not known statically")
        return self.unknown_finding(
            model,
            call,
            (
                f"The precision or strategy of the Fabric that set up the model computing `{tensor}` cannot be "
                f"determined statically ({why}); under mixed precision, DeepSpeed or FSDP `{_called(call, tensor)}.backward()` "
                "raises: prefer `fabric.backward(...)`."
            ),
        )


def _receiver(call: ast.Call) -> ast.expr:
    assert isinstance(call.func, ast.Attribute)
    return call.func.value


#: receivers written without parentheses before ``.backward()`` (``loss.backward()``, ``out[0].backward()``)
_ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)


def _called(call: ast.Call, tensor: str) -> str:
    """The receiver's text as it stands before ``.backward()``: ``(loss + aux_loss)`` keeps the
    parentheses the syntax tree's position leaves out."""
    return tensor if isinstance(_receiver(call), _ATOMS) else f"({tensor})"


def _path(model: SemanticModel, path: str | None) -> str | None:
    return None if path == model.path else path


def model_text(use: ModelUse) -> str:
    return use.module.segment(use.expr)


def _fabrics(uses: list[ModelUse]) -> list[FabricInst]:
    out: dict[tuple, FabricInst] = {}
    for u in uses:
        for f in u.setup.fabrics:
            out.setdefault(origin_key(f), f)
    return list(out.values())


def _several_deepspeed_models(model: SemanticModel, call: ast.Call, fabrics: list[FabricInst]) -> bool:
    """Whether DeepSpeed is possible for ``fabrics`` and several models are set up on them before
    ``call`` (then ``fabric.backward(loss)`` needs ``model=``)."""
    deepspeed = any(
        s.outcome is not None and s.outcome.strategy_base == "DeepSpeedStrategy"
        for f in fabrics
        for s in model.scenarios(f)
    )
    if not deepspeed:
        return False
    return len(relevant_setups(model.setups, call, _receiver(call), model.module, fabrics)) > 1


def _fix(
    model: SemanticModel, call: ast.Call, uses: list[ModelUse], fabrics: list[FabricInst]
) -> tuple[Fix | None, str]:
    fabric = fabric_in_scope(model.setups, call, model.module, fabrics)
    if fabric is None:
        return None, "no expression for the Fabric is in scope here; pass the Fabric in and call `fabric.backward(...)`"
    extra = ""
    if _several_deepspeed_models(model, call, fabrics):
        direct = {
            model_text(u)
            for u in uses
            if u.module is model.module and model.module.scope_of(u.use) is model.module.scope_of(call)
        }
        if len(direct) != 1 or len({id(u.setup.call) for u in uses}) != 1:
            return (
                None,
                "DeepSpeed is possible with several set-up models, and the loss does not come from exactly one of them (`fabric.backward` needs `model=`)",
            )
        extra = f", model={direct.pop()}"
    text = fix_text(model, call, fabric, extra)
    if text is None:
        return None, "the rewritten call would not parse"
    fix = Fix(f"Replace with `{fabric}.backward(...)`", Applicability.SAFE, (Edit(model.span(call), text),))
    return fix, ""


def fix_text(model: SemanticModel, call: ast.Call, fabric: str, extra: str = "") -> str | None:
    """``t.backward(a, k=v)`` → ``fabric.backward(t, a, k=v)`` (the call's own argument text kept)."""
    whole = model.segment(call)
    head = model.segment(call.func)
    if not whole.startswith(head) and not whole.lstrip("(").startswith(head):
        return None
    rest = whole[whole.index(head) + len(head) :].strip()
    if not (rest.startswith("(") and rest.endswith(")")):
        return None
    inner = rest[1:-1].strip().rstrip(",").strip()
    tensor = model.segment(_receiver(call))
    args = tensor + (", " + inner if inner else "") + extra
    text = f"{fabric}.backward({args})"
    try:
        ast.parse(text, mode="eval")
    except SyntaxError:
        return None
    return text


def _explain(model: SemanticModel, uses: list[ModelUse], fabrics: list[FabricInst], j: Judgement) -> Explanation:
    if j.certainty is Certainty.CERTAIN:
        head = "certainly raises: use `fabric.backward(loss)`"
    elif j.certainty is Certainty.POSSIBLE:
        head = "possibly raises: for a configuration this code can choose"
    elif j.certainty is Certainty.UNKNOWN:
        head = "precision/strategy not known statically"
    else:
        head = "no configuration this code can choose requires `fabric.backward`"
    items: list[Located] = []
    for u in uses:
        items.append(
            Located(
                f"computed by the set-up model `{model_text(u)}`", u.module.span(u.use), _path(model, u.module.path)
            )
        )
        items.append(
            Located(
                f"set up by `{u.setup.module.segment(u.setup.call)[:60]}`",
                u.setup.module.span(u.setup.call),
                _path(model, u.setup.module.path),
            )
        )
    created, steps = fabric_lines(model, fabrics)
    items += created
    for s in j.failing:
        items.append(Located(f"raises: {s.describe()} → `{s.outcome.precision_plugin}`" if s.outcome else s.describe()))
    for s in j.unknown:
        items.append(Located(f"unknown: {s.describe()}"))
    return Explanation(f"**`.backward()` on a set-up model's output** — {head}", tuple(dict.fromkeys(items)), steps)
