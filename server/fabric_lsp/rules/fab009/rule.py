"""FAB009: joint ``fabric.setup(model, optimizer)`` where the strategy needs separate setup."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from fabric_lsp import facts
from fabric_lsp.engine.findings import Certainty, Explanation, Finding, Located, Related, Verdict, resolve_severity
from fabric_lsp.engine.program.guards import Narrower
from fabric_lsp.engine.program.meta import MetaParameters, meta_parameters
from fabric_lsp.engine.python.values import FabricInst, StrategyChoice
from fabric_lsp.engine.rule import Rule, RuleContext
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.rules.fab009.docs import DOC, INVALID, SUMMARY, VALID
from fabric_lsp.rules.fab009.fix import plan_separate_setup
from fabric_lsp.rules.prefilters import PREFILTERS


@dataclass(frozen=True)
class Failing:
    choice: StrategyChoice
    failure: facts.JointSetupFailure


def _receiver(call: ast.Call) -> ast.expr:
    assert isinstance(call.func, ast.Attribute)
    return call.func.value


def _meta(model: SemanticModel, call: ast.Call) -> MetaParameters | None:
    for optimizer in call.args[1:]:
        if isinstance(optimizer, ast.Starred):
            continue
        found = meta_parameters(model.module, optimizer, call)
        if found is not None:
            return found
    return None


def _meta_doubt(failing: list[Failing], meta: MetaParameters | None) -> bool:
    """A failure rests on a meta-device model that exists only on some paths or for some value."""
    return meta is not None and not meta.certain and any(f.failure is facts.META_PARAMETERS_FAILURE for f in failing)


def _every_path_fails(choices: list[StrategyChoice], failing: list[Failing], meta: MetaParameters | None) -> bool:
    return len(failing) == len(choices) and not _meta_doubt(failing, meta)


def _certainty(choices: list[StrategyChoice], failing: list[Failing], meta: MetaParameters | None) -> Certainty | None:
    """Error where every path raises; a warning where one the code can choose fails, or where the
    failure is silent (ModelParallel trains nothing: Lightning raises no error)."""
    if not failing:
        return None
    raises = all(f.failure.raises for f in failing)
    return Certainty.CERTAIN if raises and _every_path_fails(choices, failing, meta) else Certainty.POSSIBLE


class FAB009(Rule):
    code = "FAB009"
    name = "joint-setup-needs-separate-setup"
    summary = SUMMARY
    doc = DOC
    valid = VALID
    invalid = INVALID
    fixable = True
    prefilter = PREFILTERS["FAB009"]

    def sites(self, model: SemanticModel) -> list[ast.AST]:
        return [c for c in model.method_calls("setup") if len(c.args) >= 2]

    def verdict(self, model: SemanticModel, call: ast.AST, ctx: RuleContext) -> Verdict | None:
        assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
        receiver = call.func.value
        # a Fabric known only by its type gives a hint at most: looked for only when one is wanted
        fabrics, unknown = model.fabrics(receiver, by_type=ctx.report_unknown)
        if not fabrics:
            return None
        choices: list[StrategyChoice] = [c for f in fabrics for c in f.choices]
        choices += [StrategyChoice(None, "receiver of unknown type", "?") for _ in unknown]
        choices = list(Narrower(model.module, model.inference, receiver).narrow(call, choices))
        if not choices:
            return None
        meta = _meta(model, call)
        failing = [
            Failing(c, f)
            for c in choices
            if (f := facts.joint_setup_failure(c.kind, dict(c.arguments), meta is not None)) is not None
        ]
        certainty = _certainty(choices, failing, meta)
        explanation = _explain(model, fabrics, choices, failing, meta, certainty)
        finding = None
        if certainty is not None:
            finding = self._finding(model, call, fabrics, choices, failing, meta, certainty)
        elif any(c.kind is None for c in choices):
            finding = self._unknown(model, call, choices)
        return Verdict(self.code, model.span(call), finding, explanation)

    def _finding(
        self,
        model: SemanticModel,
        call: ast.Call,
        fabrics: list[FabricInst],
        choices: list[StrategyChoice],
        failing: list[Failing],
        meta: MetaParameters | None,
        certainty: Certainty,
    ) -> Finding:
        rcv = model.segment(_receiver(call))
        what = "; ".join(dict.fromkeys(f"`{f.choice.class_name}` ({f.choice.label}) {f.failure.why}" for f in failing))
        if meta is not None and any(f.failure is facts.META_PARAMETERS_FAILURE for f in failing):
            what += f" (the optimizer is built from `{model.segment(meta.model)}`, created under `{model.segment(meta.context.item)}`)"
        advice = (
            f"set up the model first with `{rcv}.setup_module(model)`, then create the optimizer from the set-up "
            f"model's parameters and pass it to `{rcv}.setup_optimizers(optimizer)`"
        )
        if _every_path_fails(choices, failing, meta):
            message = f"Joint `{rcv}.setup(model, optimizer)` fails: {what}; {advice}."
        else:
            message = f"Joint `{rcv}.setup(model, optimizer)` fails for a configuration this code can choose: {what}; {advice}."
        fix, reason = plan_separate_setup(model.module, call, choices)
        if fix is None:
            message += f" No automatic fix: {reason}."
        return Finding(
            code=self.code,
            severity=resolve_severity(certainty),
            message=message,
            span=model.span(call),
            related=_related(model, fabrics, failing, meta),
            fix=fix,
            url=self.url,
            certainty=certainty,
        )

    def _unknown(self, model: SemanticModel, call: ast.Call, choices: list[StrategyChoice]) -> Finding:
        rcv = model.segment(_receiver(call))
        why = "; ".join(dict.fromkeys(c.label for c in choices if c.kind is None))
        return self.unknown_finding(
            model,
            call,
            (
                f"The strategy of `{rcv}` cannot be determined statically ({why}); under XLAFSDP, "
                "`FSDPStrategy(use_orig_params=False)` or ModelParallel, joint `setup(model, optimizer)` fails: "
                "those need `setup_module` first, then the optimizer, then `setup_optimizers`."
            ),
        )


def _path(model: SemanticModel, path: str | None) -> str | None:
    return None if path == model.path else path


def _related(
    model: SemanticModel, fabrics: list[FabricInst], failing: list[Failing], meta: MetaParameters | None
) -> tuple[Related, ...]:
    related: list[Related] = []
    for f in failing:
        o = f.choice.origin
        if o is not None:
            related.append(Related(f"Strategy chosen here: {f.choice.class_name}", o.span, _path(model, o.path)))
    for fab in fabrics:
        if fab.origin is not None:
            related.append(Related(f"{fab.class_name} created here", fab.origin.span, _path(model, fab.origin.path)))
    if meta is not None and any(f.failure is facts.META_PARAMETERS_FAILURE for f in failing):
        related.append(Related("Model created on the meta device here", model.span(meta.created)))
    out: list[Related] = []
    for r in related:
        if not any(r.span == x.span and r.path == x.path for x in out):
            out.append(r)
    return tuple(out)


def _explain(
    model: SemanticModel,
    fabrics: list[FabricInst],
    choices: list[StrategyChoice],
    failing: list[Failing],
    meta: MetaParameters | None,
    certainty: Certainty | None,
) -> Explanation:
    if certainty is Certainty.CERTAIN:
        head = "certainly fails: set up the model, then build and set up the optimizer"
    elif certainty is Certainty.POSSIBLE and _every_path_fails(choices, failing, meta):
        head = "possibly trains nothing: Lightning raises no error, the strategy replaces the optimizer's parameters"
    elif certainty is Certainty.POSSIBLE:
        head = "possibly fails: for a configuration this code can choose"
    elif any(c.kind is None for c in choices):
        head = "strategy not known statically"
    else:
        head = "every strategy this code can choose accepts joint setup"
    items: list[Located] = []
    failed = {id(f.choice): f for f in failing}
    for c in choices:
        name = c.class_name if c.kind is not None else "unknown"
        f = failed.get(id(c))
        text = f"`{name}` — {c.label}" + (f": {f.failure.why} (`{f.failure.where}`)" if f else ": joint setup works")
        items.append(
            Located(text, c.origin.span if c.origin else None, _path(model, c.origin.path) if c.origin else None)
        )
    if meta is not None:
        certain = "" if meta.certain else " (on some paths, or for a value not known statically)"
        items.append(
            Located(
                f"the optimizer is built from `{model.segment(meta.model)}`, created on the meta device{certain}",
                model.span(meta.created),
            )
        )
    steps: list[Located] = []
    for fab in fabrics:
        chain = ([fab.origin] if fab.origin else []) + list(fab.via)
        steps += [Located(o.text, o.span, _path(model, o.path)) for o in chain]
    return Explanation(
        f"**Joint `setup(model, optimizer)`** — {head}", tuple(dict.fromkeys(items)), tuple(dict.fromkeys(steps))
    )
