"""PL003: what ``trainer.fit`` refuses about how a LightningModule optimises — an ``optimizer_idx``
parameter of ``training_step``, several optimizers under automatic optimisation; what the Trainer
of a ``fit`` call refuses (``trainer.py``)."""

from __future__ import annotations

import ast

from fabric_lsp import facts
from fabric_lsp.engine.findings import (
    Certainty,
    Explanation,
    Located,
    Related,
    Span,
    Verdict,
)
from fabric_lsp.engine.python.modules import FUNC_TYPES
from fabric_lsp.engine.python.values import ClassRef, TrainerInst
from fabric_lsp.engine.rule import Rule, RuleContext
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.rules.entry_points import entry_point_related, how_run
from fabric_lsp.rules.pl003 import trainer
from fabric_lsp.rules.pl003.docs import DOC, INVALID, SUMMARY, VALID
from fabric_lsp.rules.prefilters import PREFILTERS

_OPTIMIZER = "lightning/pytorch/core/optimizer.py"
OPTIMIZER_IDX = (
    "RuntimeError: Training with multiple optimizers is only supported with manual optimization. Remove the"
    " `optimizer_idx` argument from `training_step`, set `self.automatic_optimization = False` and access your"
    " optimizers in `training_step` with `opt1, opt2, ... = self.optimizers()`."
)
SEVERAL_OPTIMIZERS = (
    "RuntimeError: Training with multiple optimizers is only supported with manual optimization. Set"
    " `self.automatic_optimization = False`, then access your optimizers in `training_step` with"
    " `opt1, opt2, ... = self.optimizers()`."
)
_OPTIMIZER_IDX_WHERE = f"{_OPTIMIZER}:352-357"
_SEVERAL_WHERE = f"{_OPTIMIZER}:358-363"
#: the hooks whose definitions are checked
_CHECKED = frozenset({"training_step", "configure_optimizers"})


class PL003(Rule):
    code = "PL003"
    name = "optimization-contract"
    summary = SUMMARY
    doc = DOC
    valid = VALID
    invalid = INVALID
    prefilter = PREFILTERS["PL003"]

    def sites(self, model: SemanticModel) -> list[ast.AST]:
        out: list[ast.AST] = []
        for lc in model.lightning_classes(_CHECKED):
            if lc.base != facts.LIGHTNING_MODULE_CLASS:
                continue
            out += [f for f in lc.cls.node.body if isinstance(f, FUNC_TYPES) and f.name in _CHECKED]
        for method in facts.TRAINER_ENTRY_POINTS:  # the Trainer half: what the Trainer of the call refuses
            out += model.method_calls(method)
        return sorted(out, key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]

    def verdict(self, model: SemanticModel, site: ast.AST, ctx: RuleContext) -> Verdict | None:
        if isinstance(site, ast.Call):
            return self._trainer(model, site, ctx)
        assert isinstance(site, FUNC_TYPES)
        if not facts.has_feature("removed_1x_api", ctx.lightning_version):
            return None  # Lightning 1.x optimised several optimizers itself, with `optimizer_idx`
        owner = model.module.parent_of(site)
        assert isinstance(owner, ast.ClassDef)
        cls = ClassRef(owner, model.module)
        if site.name == "training_step":
            return self._optimizer_idx(model, cls, site)
        return self._several_optimizers(model, cls, site)

    def _optimizer_idx(self, model: SemanticModel, cls: ClassRef, func: ast.AST) -> Verdict | None:
        param = _parameter(func, "optimizer_idx")
        if param is None:
            return None
        fit = _fit(model, cls)
        if fit is None:
            return None
        certainty, related = fit
        message = (
            f"`{cls.name}.training_step` takes `optimizer_idx`: {_fit_raises(certainty)} {OPTIMIZER_IDX}"
            f" ({_OPTIMIZER_IDX_WHERE}; also under manual optimisation)."
        )
        return self._verdict(model, model.span(param), certainty, message, related, _OPTIMIZER_IDX_WHERE)

    def _several_optimizers(self, model: SemanticModel, cls: ClassRef, func: ast.AST) -> Verdict | None:
        step = model.hook(cls, "training_step")
        if step is not None and _parameter(step.node, "optimizer_idx") is not None:
            return None  # the same error, reported at `optimizer_idx` (Lightning checks it first)
        if model.automatic_optimization(cls) is not True:
            return None
        configs = model.configure_optimizers(cls) or []
        several = [c for c in configs if c.optimizers is not None and c.optimizers > 1]
        fit = _fit(model, cls) if several else None
        if fit is None:
            return None
        certainty, related = fit
        if len(several) < len(configs):
            certainty = Certainty.POSSIBLE  # another `return` gives one optimizer (or an unknown number)
        count = several[0].optimizers
        message = (
            f"`{cls.name}.configure_optimizers` returns {count} optimizers under automatic optimisation:"
            f" {_fit_raises(certainty)} {SEVERAL_OPTIMIZERS} ({_SEVERAL_WHERE})."
        )
        return self._verdict(model, model.span(several[0].node), certainty, message, related, _SEVERAL_WHERE)

    def _trainer(self, model: SemanticModel, call: ast.Call, ctx: RuleContext) -> Verdict | None:
        """``trainer.fit(model)`` whose Trainer refuses how the model optimises (``trainer.py``);
        ``validate``/``test``/``predict``: only DeepSpeed's clipping by value (its setup runs for them)."""
        assert isinstance(call.func, ast.Attribute)
        checks = trainer.checks_of(ctx.lightning_version)
        fitting = call.func.attr == "fit"
        if not (checks.deepspeed or (fitting and checks.manual)) or model.own_instance_not_trainer(call.func.value):
            return None
        if not any(isinstance(v, TrainerInst) and v.args is not None for v in model.values(call.func.value)):
            return None  # no Trainer known by its arguments: no outcome can fail (`trainer.fit_outcomes`)
        classes, unknown = model.entry_point_classes(call)
        if not classes:
            return None
        outcomes = trainer.fit_outcomes(model, call, [lc.cls for lc in classes], checks, fitting)
        failures = [o for o in outcomes if isinstance(o, trainer.Failure)]
        if not failures:
            return None
        certain = not unknown and len(failures) == len(outcomes) and all(f.certain for f in failures)
        certainty = Certainty.CERTAIN if certain else Certainty.POSSIBLE
        first = failures[0]
        text, where, argument = trainer.FAILURES[first.kind]
        verb = "raises" if certain else "may raise (on some paths)"
        message = f"`{model.segment(call.func)}(...)` {verb} {text.format(value=first.value)} ({where}): {_why(model, first)}."
        return self._verdict(
            model, model.span(call), certainty, message, _trainer_related(model, first, argument), where
        )

    def _verdict(
        self,
        model: SemanticModel,
        span: Span,
        certainty: Certainty,
        message: str,
        related: tuple[Related, ...],
        where: str,
    ) -> Verdict:
        finding = self.finding(certainty, message, span, related, lightning=where)
        return Verdict(
            self.code, span, finding, Explanation(f"**Optimisation contract** — {message}", (Located(message),), ())
        )


def _parameter(func: ast.AST, name: str) -> ast.arg | None:
    """The parameter ``name`` written in the signature of ``func`` (``**kwargs`` does not count:
    Lightning asks for an explicit one, ``is_param_in_hook_signature(..., explicit=True)``)."""
    args = getattr(func, "args", None)
    if args is None:
        return None
    return next((a for a in (*args.posonlyargs, *args.args, *args.kwonlyargs) if a.arg == name), None)


def _fit(model: SemanticModel, cls: ClassRef) -> tuple[Certainty, tuple[Related, ...]] | None:
    """How certainly ``trainer.fit`` runs ``cls`` (:func:`how_run`), with the calls to cite."""
    run = how_run(model, cls, ("fit",))
    if run.certainty is None:
        return None
    return run.certainty, tuple(entry_point_related(model, e) for e in run.entries[:3])


def _why(model: SemanticModel, f: trainer.Failure) -> str:
    if f.kind == "deepspeed":
        return f"`{f.cls.name}.configure_optimizers` returns {_how_many(model, f.cls)} and the Trainer's strategy is {f.value}"
    if f.kind == "by_value":
        return f'the Trainer clips by value (`gradient_clip_algorithm="value"`) and its strategy is {f.value}'
    _, _, argument = trainer.FAILURES[f.kind]
    return f"`{f.cls.name}` sets `automatic_optimization = False` and the Trainer has `{argument}={f.value!r}`"


def _how_many(model: SemanticModel, cls: ClassRef) -> str:
    for c in model.configure_optimizers(cls) or []:
        if c.optimizers is not None and c.optimizers > 1:
            return f"{c.optimizers} optimizers"
        if c.schedulers is not None and len(c.schedulers) > 1:
            return f"{len(c.schedulers)} schedulers"
    return "several optimizers or schedulers"


def _trainer_related(model: SemanticModel, f: trainer.Failure, argument: str) -> tuple[Related, ...]:
    out: list[Related] = []
    given = f.inst.args.get(argument) if f.inst.args is not None else None
    if given is not None:
        expr, ctx = given
        out.append(
            Related(
                f"`{argument}` is given here",
                ctx.module.span(expr),
                None if ctx.module is model.module else ctx.module.path,
            )
        )
    elif f.inst.origin is not None:
        origin = f.inst.origin
        out.append(
            Related("the Trainer is built here", origin.span, None if origin.path == model.path else origin.path)
        )
    if f.kind == "deepspeed":
        configs = model.configure_optimizers(f.cls) or []
        if configs:
            m = f.cls.module
            out.append(
                Related(
                    "`configure_optimizers` returns here",
                    m.span(configs[0].node),
                    None if m is model.module else m.path,
                )
            )
    return tuple(out)


def _fit_raises(certainty: Certainty) -> str:
    return (
        "`trainer.fit` raises" if certainty is Certainty.CERTAIN else "`trainer.fit`, where it runs the class, raises"
    )
