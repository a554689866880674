"""FAB001: model and optimizer set up separately under DeepSpeed or XLA."""

from __future__ import annotations

import ast

from fabric_lsp import facts
from fabric_lsp.engine.findings import (
    Certainty,
    Explanation,
    Finding,
    Pos,
    Related,
    Verdict,
    resolve_severity,
)
from fabric_lsp.engine.program.guards import Narrower
from fabric_lsp.engine.python.values import FabricInst, StrategyChoice
from fabric_lsp.engine.rule import Rule, RuleContext
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.facts import Kind
from fabric_lsp.rules.fab001.docs import DOC, INVALID, SUMMARY, VALID
from fabric_lsp.rules.fab001.explain import explain_at, explain_choices
from fabric_lsp.rules.fab001.fix import (
    Branches,
    Plan,
    find_module_setup,
    plan_joint_setup,
)
from fabric_lsp.rules.prefilters import PREFILTERS


def _describe(choice: StrategyChoice) -> str:
    return choice.label


def _raise_name(choices: list[StrategyChoice]) -> str:
    return " or ".join(dict.fromkeys(f"`{c.class_name}`" for c in choices))


def _receiver(call: ast.Call) -> ast.expr:
    """``R`` of ``R.setup_optimizers(...)`` (the rule's sites are method calls)."""
    assert isinstance(call.func, ast.Attribute)
    return call.func.value


def _refusal(choice: StrategyChoice) -> str | None:
    return facts.joint_setup_refusal(choice.kind, dict(choice.arguments))


def branches_of(choices: list[StrategyChoice]) -> Branches:
    """What the possible strategies mean for the joint-setup rewrite (from ``facts``)."""
    kinds = {c.kind for c in choices}
    meta = [c for c in choices if c.kind is None or c.kind in facts.META_PARAMETERS_REFUSE_JOINT_SETUP]
    return Branches(
        deepspeed_possible=Kind.DEEPSPEED in kinds,
        all_accept=all(facts.joint_setup_known(c.kind, dict(c.arguments)) for c in choices),
        meta_sensitive=tuple(
            dict.fromkeys(f"`{c.class_name}`" if c.kind is not None else "an unknown strategy" for c in meta)
        ),
    )


def plan_for(model: SemanticModel, call: ast.Call, choices: list[StrategyChoice]) -> Plan:
    """The fix, or why there is none: joint setup must work under every strategy this Fabric
    can have; a branch that needs separate setup gets no rewrite."""
    refusing = [f"`{c.class_name}` ({_describe(c)}) {why}" for c in choices if (why := _refusal(c)) is not None]
    if refusing:
        return Plan(
            module_setup=find_module_setup(model.module, call)[1],
            reason=(
                f"another possible strategy needs separate setup: {'; '.join(dict.fromkeys(refusing))}; set up jointly "
                "only `if isinstance(fabric.strategy, (DeepSpeedStrategy, XLAStrategy))` and keep the separate setup "
                "on the other branch"
            ),
        )
    return plan_joint_setup(model.module, call, branches_of(choices), model.other_modules_mentioning)


class FAB001(Rule):
    code = "FAB001"
    name = "separated-setup-under-deepspeed-xla"
    summary = SUMMARY
    doc = DOC
    valid = VALID
    invalid = INVALID
    fixable = True
    prefilter = PREFILTERS["FAB001"]

    def sites(self, model: SemanticModel) -> list[ast.AST]:
        return list(model.method_calls("setup_optimizers"))

    def hover(self, model: SemanticModel, pos: Pos) -> Explanation | None:
        return explain_at(model, pos)

    def verdict(self, model: SemanticModel, call: ast.AST, ctx: RuleContext) -> Verdict | None:
        assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
        receiver = call.func.value
        # a Fabric known only by its type gives a hint at most: looked for only when one is wanted
        fabrics, unknown = model.fabrics(receiver, by_type=ctx.report_unknown)
        if not fabrics:
            return None
        choices: list[StrategyChoice] = [c for f in fabrics for c in f.choices]
        choices += [StrategyChoice(None, "receiver of unknown type", "?") for _ in unknown]
        choices = Narrower(model.module, model.inference, receiver).narrow(call, choices)
        explanation = explain_choices(fabrics, list(choices))
        span = model.span(call)
        raising = [c for c in choices if c.kind is not None and c.kind.raises_on_separated_setup]
        if raising:
            finding = self._finding(model, call, fabrics, choices, raising)
        elif any(c.kind is None for c in choices):
            finding = self._unknown_hint(model, call, choices)
        else:
            finding = None
        return Verdict(self.code, span, finding, explanation)

    def _unknown_hint(self, model: SemanticModel, call: ast.Call, choices: list[StrategyChoice]) -> Finding:
        rcv = model.segment(_receiver(call))
        why = "; ".join(dict.fromkeys(c.label for c in choices if c.kind is None))
        return self.unknown_finding(
            model,
            call,
            (
                f"The strategy of `{rcv}` cannot be determined statically ({why}); if it can be "
                f"DeepSpeed or XLA, `{rcv}.setup_optimizers(...)` raises: prefer `{rcv}.setup(model, optimizer)`."
            ),
        )

    def _plan(self, model: SemanticModel, call: ast.Call, choices: list[StrategyChoice]) -> Plan:
        return plan_for(model, call, choices)

    def _finding(
        self,
        model: SemanticModel,
        call: ast.Call,
        fabrics: list[FabricInst],
        choices: list[StrategyChoice],
        raising: list[StrategyChoice],
    ) -> Finding:
        certainty = Certainty.CERTAIN if len(raising) == len(choices) else Certainty.POSSIBLE
        plan = self._plan(model, call, choices)
        rcv = model.segment(_receiver(call))
        names = _raise_name(raising)
        origins = ", ".join(dict.fromkeys(_describe(c) for c in raising))
        if certainty is Certainty.CERTAIN:
            message = (
                f"`{rcv}.setup_optimizers(...)` raises RuntimeError under {names} ({origins}): "
                f"it requires the model and optimizer(s) to be set up jointly with `{rcv}.setup(model, optimizer)`."
            )
        else:
            message = (
                f"`{rcv}.setup_optimizers(...)` raises RuntimeError if the strategy is {names}, "
                f"which this code can choose ({origins}); set up the model and optimizer(s) jointly "
                f"with `{rcv}.setup(model, optimizer)`."
            )
        if plan.fix is None and plan.reason:
            message += f" No automatic fix: {plan.reason}."
        elif plan.notes:
            message += f" The fix is unsafe: {'; '.join(plan.notes)}."
        return Finding(
            code=self.code,
            severity=resolve_severity(certainty),
            message=message,
            span=model.span(call),
            related=_related(model, fabrics, raising, plan),
            fix=plan.fix,
            url=self.url,
            certainty=certainty,
        )


def _related(
    model: SemanticModel, fabrics: list[FabricInst], raising: list[StrategyChoice], plan: Plan
) -> tuple[Related, ...]:
    here = model.path
    related: list[Related] = []
    for c in raising:
        if c.origin is not None:
            r = Related(
                f"Strategy chosen here: {c.class_name}", c.origin.span, c.origin.path if c.origin.path != here else None
            )
            if r not in related:
                related.append(r)
    for f in fabrics:
        if f.origin is None:
            continue
        path = f.origin.path if f.origin.path != here else None
        if not any(r.span == f.origin.span and r.path == path for r in related):
            related.append(Related(f"{f.class_name} created here", f.origin.span, path))
    if plan.module_setup is not None:
        related.append(Related("Model set up separately here", model.span(plan.module_setup)))
    related += plan.related
    return tuple(related)
