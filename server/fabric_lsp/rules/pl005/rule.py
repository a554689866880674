"""PL005: ``trainer.test/validate/predict(ckpt_path="best")`` (or no model and no ``ckpt_path``
after a ``fit``, which means "best") on a Trainer that has no best checkpoint to load."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from itertools import product

from fabric_lsp import facts
from fabric_lsp.engine.findings import (
    Certainty,
    Explanation,
    Located,
    Related,
    Verdict,
)
from fabric_lsp.engine.python import paths
from fabric_lsp.engine.python.values import Const, TrainerInst, Unknown
from fabric_lsp.engine.rule import Rule, RuleContext
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.rules.expected import caught
from fabric_lsp.rules.pl005.docs import DOC, INVALID, SUMMARY, VALID
from fabric_lsp.rules.pl005.fitted import Fitted, fitted
from fabric_lsp.rules.pl005.kept import reaches_only
from fabric_lsp.rules.prefilters import PREFILTERS
from fabric_lsp.rules.trainer_args import argument_values
from fabric_lsp.rules.trainer_callbacks import Callbacks, Checkpoint, callback_alternatives

_CONNECTOR = "lightning/pytorch/trainer/connectors/checkpoint_connector.py"
_METHODS = ("test", "validate", "predict")
#: the positional index of ``ckpt_path`` in each entry point (``trainer/trainer.py``)
_CKPT_INDEX = {"test": 2, "validate": 2, "predict": 4}
#: failure → (Lightning's message with ``{fn}`` for the entry point, where it is raised, why)
_FAILURES = {
    "no_callback": (
        '`.{fn}(ckpt_path="best")` is set but `ModelCheckpoint` is not configured.',
        f"{_CONNECTOR}:165-166",
        "the Trainer has no checkpoint callback (`enable_checkpointing=False`)",
    ),
    "fast_dev_run": (
        'You cannot execute `.{fn}(ckpt_path="best")` with `fast_dev_run=True`. Please pass an exact checkpoint path to `.{fn}(ckpt_path=...)`',
        f"{_CONNECTOR}:168-174",
        "under `fast_dev_run` the `ModelCheckpoint` never saves",
    ),
    "no_fit": (
        '`.{fn}(ckpt_path="best")` is set but `ModelCheckpoint` is not configured to save the best model.',
        f"{_CONNECTOR}:175-177",
        "no `fit` ran on this Trainer, so its `ModelCheckpoint` saved nothing",
    ),
    "top_k": (
        '`.{fn}(ckpt_path="best")` is set but `ModelCheckpoint` is not configured to save the best model.',
        f"{_CONNECTOR}:175-177",
        "its first `ModelCheckpoint` has `save_top_k=0` and saves no best model",
    ),
}
_DEFAULT_CHECKPOINT = Checkpoint(None, True, (1,))  # `enable_checkpointing=True` adds `ModelCheckpoint()`
_UNKNOWN = "unknown"
_OK = "ok"


class PL005(Rule):
    code = "PL005"
    name = "best-checkpoint-unavailable"
    summary = SUMMARY
    doc = DOC
    valid = VALID
    invalid = INVALID
    prefilter = PREFILTERS["PL005"]

    def sites(self, model: SemanticModel) -> list[ast.AST]:
        calls = sorted((c for m in _METHODS for c in model.method_calls(m)), key=lambda n: (n.lineno, n.col_offset))
        return list(calls)

    def verdict(self, model: SemanticModel, site: ast.AST, ctx: RuleContext) -> Verdict | None:
        assert isinstance(site, ast.Call) and isinstance(site.func, ast.Attribute)
        if not facts.has_feature("removed_1x_api", ctx.lightning_version):
            return None  # 1.x chose and reported the checkpoint otherwise (`trainer.test()` loaded "best" by default)
        called = _called(model, site)
        if called is None or model.own_instance_not_trainer(site.func.value) or caught(model, site, "ValueError"):
            return None
        insts = model.values(site.func.value)
        if not insts or not all(isinstance(v, TrainerInst) and v.args is not None for v in insts):
            return self._unknown(model, site, insts) if called.mode == "best" and called.best is None else None
        results = [_path_state(model, site, v, called) for v in insts]  # type: ignore[arg-type]
        if any(state == _UNKNOWN for state, _ in results):
            return None
        failures = [f for _, fs in results for f in fs]
        if not failures:
            return None
        every = all(state == "fail" for state, _ in results)
        return self._verdict(model, site, insts[0], failures[0], called, every)  # type: ignore[arg-type]

    def _unknown(self, model: SemanticModel, site: ast.Call, values: list) -> Verdict | None:
        """The hint (``report-unknown``) where the Trainer is not known statically (a
        ``LightningCLI``'s, one from a config): whether it has a best checkpoint is not checked."""
        assert isinstance(site.func, ast.Attribute)
        reasons = [v.reason for v in values if isinstance(v, Unknown) and v.reason]
        if not reasons:
            return None
        rcv = model.segment(site.func.value)
        message = f'`{rcv}` is not known statically ({reasons[0]}): whether it has a best checkpoint for `ckpt_path="best"` is not checked.'
        return Verdict(self.code, model.span(site), self.unknown_finding(model, site, message))

    def _verdict(
        self, model: SemanticModel, site: ast.Call, inst: TrainerInst, failure: str, called: _Call, every: bool
    ) -> Verdict:
        """``every``: the call fails on every path where ``ckpt_path`` is "best"."""
        assert isinstance(site.func, ast.Attribute)
        fn = site.func.attr
        text, where, why = _FAILURES[failure]
        verb = "raises" if every else "may raise (on some paths)"
        certain = every and called.best is None
        message = (
            f"{called.written} {verb} ValueError{called.when}: {text.format(fn=fn)} ({where}): {why}."
            ' Pass the model in memory or an exact checkpoint path (`"last"` loads another checkpoint).'
        )
        certainty = Certainty.CERTAIN if certain else Certainty.POSSIBLE
        related: tuple[Related, ...] = ()
        if inst.origin is not None:
            related = (
                Related(
                    "the Trainer is built here",
                    inst.origin.span,
                    None if inst.origin.path == model.path else inst.origin.path,
                ),
            )
        span = model.span(site)
        finding = self.finding(certainty, message, span, related, lightning=where)
        return Verdict(
            self.code,
            span,
            finding,
            Explanation(f"**Best checkpoint unavailable** — {message}", (Located(message),), ()),
        )


# -- the call ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Call:
    """What a ``test``/``validate``/``predict`` call asks for."""

    #: ``"best"``: ``ckpt_path`` is "best"; ``"implicit"``: no model and no ``ckpt_path`` (Lightning
    #: takes "best" when a model is connected)
    mode: str
    #: the "best" alternatives where ``ckpt_path`` is "best" on some paths only (an option's
    #: default), None where on every path
    best: tuple[Const, ...] | None
    written: str  # the call as the message names it
    when: str = ""  # where "best" is one alternative: when it is


def _called(model: SemanticModel, call: ast.Call) -> _Call | None:
    """None where the call passes a model or another checkpoint on every path."""
    assert isinstance(call.func, ast.Attribute)
    if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    index = _CKPT_INDEX[call.func.attr]
    ckpt = next(
        (k.value for k in call.keywords if k.arg == "ckpt_path"), call.args[index] if len(call.args) > index else None
    )
    method = model.segment(call.func)
    if ckpt is not None:
        best = _best(model, ckpt)
        if best is None:
            return _Call("best", None, f'`{method}(ckpt_path="best")`')
        notes = dict.fromkeys(b.note or '"best"' for b in best)
        when = f" when `ckpt_path` is {' or '.join(notes)}"
        return _Call("best", best, f"`{method}(ckpt_path={model.segment(ckpt)})`", when) if best else None
    given = next((k.value for k in call.keywords if k.arg == "model"), call.args[0] if call.args else None)
    if given is not None and not (isinstance(given, ast.Constant) and given.value is None):
        return None
    if re.search(r"\.ckpt_path\s*=(?!=)", model.module.text):
        return None  # `trainer.ckpt_path = ...` is what a call without one loads
    return _Call("implicit", None, f'`{method}(...)` without a model (after `fit` it loads `ckpt_path="best"`)')


def _best(model: SemanticModel, expr: ast.expr) -> tuple[Const, ...] | None:
    """None where ``expr`` is "best" on every path, else its "best" alternatives (``--ckpt_path``
    defaulting to "best": the default, on its path); () where it is never "best"."""
    if isinstance(expr, ast.Constant):
        return None if expr.value == "best" else ()
    values = model.values(expr)
    best = tuple(v for v in values if isinstance(v, Const) and v.value == "best")
    return None if best and len(best) == len(values) else best


# -- one Trainer (one path) ----------------------------------------------------------------------------
def _path_state(model: SemanticModel, site: ast.Call, inst: TrainerInst, called: _Call) -> tuple[str, list[str]]:
    """("fail"|"maybe"|"ok"|"unknown", the failures seen), on the paths where ``ckpt_path`` is "best"."""
    fits = fitted(model, site, inst)
    if called.best is not None:
        fits = [
            (fit, merged)
            for fit, path in fits
            for b in called.best
            if (merged := paths.merge(path, paths.path_of(b))) is not None
        ]
        if not fits:
            return _OK, []
    if called.mode == "implicit" and any(fit not in (Fitted.YES, Fitted.RESUMED) for fit, _ in fits):
        # without a model connected: another error
        return (_OK, []) if all(fit is Fitted.NO for fit, _ in fits) else (_UNKNOWN, [])
    outcomes = _outcomes(model, inst, fits)
    if outcomes is not None and _model_callbacks(model):
        # a LightningModule's `configure_callbacks` may add a `ModelCheckpoint` when `fit` starts
        outcomes = [_UNKNOWN if o in ("no_callback", "top_k") else o for o in outcomes]
    if outcomes is None:
        return _UNKNOWN, []
    failures = [o for o in outcomes if o not in (_OK, _UNKNOWN)]
    if not failures:
        return (_UNKNOWN if _UNKNOWN in outcomes else _OK), []
    # a path that certainly fails is a configuration the code visibly chooses, whatever the others do
    return ("fail" if len(failures) == len(outcomes) else "maybe"), failures


def _model_callbacks(model: SemanticModel) -> bool:
    """Whether a LightningModule of the workspace may define ``configure_callbacks``."""
    return "configure_callbacks" in model.module.text or bool(model.other_modules_mentioning("configure_callbacks"))


def _outcomes(model: SemanticModel, inst: TrainerInst, fits: list[tuple[Fitted, frozenset]]) -> list[str] | None:
    assert inst.args is not None
    enables = argument_values(model, inst, "enable_checkpointing", True)
    fast = argument_values(model, inst, "fast_dev_run", False)
    callbacks = callback_alternatives(model, inst.args.get("callbacks"), inst.args.open)
    if enables is None or fast is None or callbacks is None:
        return None
    out: list[str] = []
    for (enable, p1), (fdr, p2), cbs, (fit, p3) in product(enables, fast, callbacks, fits):
        if _merged(inst.args.path, p1, p2, cbs.path, p3) is None:
            continue
        out += _outcome(enable, fdr, cbs, fit, _may_be_shared(model, inst, cbs))
    return out or None


def _may_be_shared(model: SemanticModel, inst: TrainerInst, cbs: Callbacks) -> bool:
    """Whether the first checkpoint callback is an object another Trainer may have fitted with:
    "best" reads the callback's own ``best_model_path`` (``checkpoint_connector.py:164-179``).
    Not where it is built in this ``Trainer(...)`` call, or built beside it and handed to it
    alone (``ckpt = ModelCheckpoint(...)``; ``Trainer(callbacks=[ckpt])``: :mod:`.kept`)."""
    first = cbs.items[0] if cbs.items else None
    if first is None or first.call is None:
        return False
    origin = inst.origin
    m = model.module
    if origin is None or origin.path != m.path or m.parent_of(first.call) is None:
        return True
    span = m.span(first.call)
    if origin.span.start <= span.start and span.end <= origin.span.end:
        return False
    top = m.top_for_line(origin.span.start.line + 1)
    trainer = (
        next((c for c in ast.walk(top) if isinstance(c, ast.Call) and m.span(c) == origin.span), None) if top else None
    )
    return trainer is None or not reaches_only(model, first.call, trainer)


def _merged(*parts: frozenset) -> frozenset | None:
    path: frozenset | None = paths.EMPTY
    for p in parts:
        path = paths.merge(path, p) if path is not None else None
    return path


def _outcome(enable: object, fdr: object, cbs: Callbacks, fit: Fitted, shared: bool) -> list[str]:
    """What ``_parse_ckpt_path`` does with "best" on one configuration (``shared``: its checkpoint
    callback may have been fitted with by another Trainer)."""
    if not enable:
        # a `ModelCheckpoint` with `enable_checkpointing=False`: `Trainer(...)` raises first
        return [_OK] if cbs.items else ["no_callback"]
    first = cbs.items[0] if cbs.items else _DEFAULT_CHECKPOINT
    if not first.model_checkpoint:
        return [_OK]  # no `best_model_path`: nothing is loaded, no error
    if isinstance(fdr, int) and not isinstance(fdr, bool) and fdr < 0:
        return [_OK]  # `Trainer(...)` refuses it first
    if fdr:
        # a resumed fit restores the callback's `best_model_path` (if its `dirpath` matches)
        return [_UNKNOWN] if fit is Fitted.RESUMED else ["fast_dev_run"]
    if fit is Fitted.NO:
        return [_UNKNOWN] if shared else ["no_fit"]
    if fit is not Fitted.YES or first.save_top_k is None:
        return [_UNKNOWN]
    return ["top_k" if k == 0 and not isinstance(k, bool) else _OK for k in first.save_top_k]
