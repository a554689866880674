"""PL003's Trainer half: what the Trainer of a ``trainer.fit(model)`` call refuses of how the model
optimises — automatic clipping or accumulation under manual optimisation
(``trainer/configuration_validator.py``), clipping by value and several optimizers or schedulers
under DeepSpeed (``strategies/deepspeed.py``).

Each (LightningModule class, Trainer alternative, consistent path through its arguments) gives an
outcome, in the order Lightning checks: ``gradient_clip_val``, ``accumulate_grad_batches`` (at the
start of ``fit``), then, when the strategy is set up, DeepSpeed's ``init_deepspeed`` (clipping by
value, ``deepspeed.py:470``) and the ``_init_optimizers`` it calls after (``deepspeed.py:482``)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from itertools import product

from fabric_lsp import facts
from fabric_lsp.engine.python import paths
from fabric_lsp.engine.python.modules import FUNC_TYPES
from fabric_lsp.engine.python.values import (
    ClassRef,
    Const,
    Ctx,
    Instance,
    QualRef,
    StrategyInst,
    TrainerInst,
    Unknown,
    Value,
)
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.rules.trainer_args import argument_values

_VALIDATOR = "lightning/pytorch/trainer/configuration_validator.py"
CLIP = (
    "MisconfigurationException: Automatic gradient clipping is not supported for manual optimization."
    " Remove `Trainer(gradient_clip_val={value})` or switch to automatic optimization."
)
ACCUMULATE = (
    "MisconfigurationException: Automatic gradient accumulation is not supported for manual optimization."
    " Remove `Trainer(accumulate_grad_batches={value})` or switch to automatic optimization."
)
DEEPSPEED = "MisconfigurationException: DeepSpeed currently only supports single optimizer, single optional scheduler."
BY_VALUE = "MisconfigurationException: DeepSpeed does not support clipping gradients by value."
#: failure → (Lightning's message, where it is raised, the Trainer argument it reads)
FAILURES = {
    "clip": (CLIP, f"{_VALIDATOR}:122-127", "gradient_clip_val"),
    "accumulate": (ACCUMULATE, f"{_VALIDATOR}:128-133", "accumulate_grad_batches"),
    "by_value": (BY_VALUE, "lightning/pytorch/strategies/deepspeed.py:470-471", "gradient_clip_algorithm"),
    "deepspeed": (DEEPSPEED, "lightning/pytorch/strategies/deepspeed.py:482-485", "strategy"),
}
#: what a subclass of ``DeepSpeedStrategy`` may override to configure the optimizers otherwise
_DEEPSPEED_OVERRIDES = frozenset(
    {
        "__init__",
        "setup",
        "config",
        "_init_optimizers",
        "init_deepspeed",
        "_initialize_deepspeed_train",
        "_setup_model_and_optimizer",
        "_load_config",
    }
)
_TRAINER_STRATEGY_PREFIXES = ("lightning.pytorch.strategies.", "pytorch_lightning.strategies.")
_UNKNOWN = "unknown"
_OK = "ok"


@dataclass(frozen=True)
class Failure:
    """One way the ``fit`` call fails: ``kind`` a key of :data:`FAILURES`, ``value`` the argument's
    value (``gradient_clip_val``, ``accumulate_grad_batches``) or how the strategy is written;
    ``certain`` False where only some ``return`` of ``configure_optimizers`` gives several."""

    kind: str
    value: object
    cls: ClassRef
    inst: TrainerInst
    certain: bool = True


@dataclass(frozen=True)
class DeepSpeed:
    """A DeepSpeed strategy of the Trainer: ``text`` how it is written, ``own_optimizer`` where its
    config may name an ``"optimizer"`` (then ``configure_optimizers`` is never called,
    ``strategies/deepspeed.py:497``)."""

    text: str
    own_optimizer: bool


@dataclass(frozen=True)
class Checks:
    manual: bool  # the manual-optimisation checks of the analysed version
    deepspeed: bool  # DeepSpeed's check (reported from 2.0: 1.x also took several optimizers automatically)


def checks_of(version: str | None) -> Checks:
    v = facts.version_tuple(version or facts.LATEST_LIGHTNING)
    return Checks(v >= facts.MANUAL_OPTIMIZATION_CHECKS_SINCE, facts.has_feature("removed_1x_api", version))


def fit_outcomes(
    model: SemanticModel, call: ast.Call, classes: list[ClassRef], checks: Checks, fitting: bool = True
) -> list[object]:
    """The outcomes of ``call`` (a ``Failure``, ``"ok"`` or ``"unknown"``), one per class, Trainer
    alternative and consistent path; not ``fitting`` (``validate``/``test``/``predict``), only
    DeepSpeed's clipping by value is checked (``init_deepspeed`` runs in every setup, the
    validator's optimisation checks and ``configure_optimizers`` only in ``fit``)."""
    assert isinstance(call.func, ast.Attribute)
    insts = model.values(call.func.value)
    out: list[object] = []
    for cls, inst in product(classes, insts or [Unknown()]):
        if not isinstance(inst, TrainerInst) or inst.args is None:
            out.append(_UNKNOWN)
            continue
        out += _class_outcomes(model, cls, inst, checks, fitting)
    return out


def _class_outcomes(
    model: SemanticModel, cls: ClassRef, inst: TrainerInst, checks: Checks, fitting: bool
) -> list[object]:
    auto = model.automatic_optimization(cls) if fitting else True
    if auto is None:
        return [_UNKNOWN]
    manual = fitting and checks.manual and not auto
    several = several_for_deepspeed(model, cls, auto) if checks.deepspeed and fitting else "no"
    by_value = by_value_alternatives(model, inst) if checks.deepspeed else [(False, paths.EMPTY)]
    deepspeed = several != "no" or any(v is not False for v, _ in by_value)
    if not manual and not deepspeed:
        return [_OK]
    none = [(None, paths.EMPTY)]
    clips = (argument_values(model, inst, "gradient_clip_val", None) or [(_UNKNOWN, paths.EMPTY)]) if manual else none
    accs = (
        (argument_values(model, inst, "accumulate_grad_batches", 1) or [(_UNKNOWN, paths.EMPTY)])
        if manual
        else [(1, paths.EMPTY)]
    )
    strategies = strategy_alternatives(model, inst) if deepspeed else [(False, paths.EMPTY)]
    every_type = checks.deepspeed  # 2.x: `accumulate_grad_batches` is not converted (1.x turned `None` into 1)
    out: list[object] = []
    for (clip, p1), (acc, p2), (value, p3), (strategy, p4) in product(clips, accs, by_value, strategies):
        if _merged(inst.args.path if inst.args else paths.EMPTY, p1, p2, p3, p4) is None:
            continue
        if manual:
            failed = _manual_outcome(cls, inst, clip, acc, every_type)
            if failed is not None:
                out.append(failed)
                continue
        out.append(_deepspeed_outcome(cls, inst, strategy, value, several))
    return out or [_UNKNOWN]


def _merged(*parts: frozenset) -> frozenset | None:
    path: frozenset | None = paths.EMPTY
    for p in parts:
        path = paths.merge(path, p) if path is not None else None
    return path


def _manual_outcome(cls: ClassRef, inst: TrainerInst, clip: object, acc: object, every_type: bool) -> object:
    """What the validator does on one path under manual optimisation (``configuration_validator.py:119-133``):
    a ``Failure``, ``"unknown"``, or None where it lets ``fit`` go on."""
    if clip == _UNKNOWN or not (clip is None or _number(clip)):
        return _UNKNOWN  # not a number: `Trainer(...)` raises TypeError first, or not known
    if clip is not None and clip > 0:  # type: ignore[operator]
        return Failure("clip", clip, cls, inst)
    if acc == _UNKNOWN or not (every_type or _integer(acc)):
        return _UNKNOWN
    if acc != 1:  # any value: `Trainer.__init__` stores it unchecked (trainer.py:443), the validator compares
        return Failure("accumulate", acc, cls, inst)
    return None


def _deepspeed_outcome(
    cls: ClassRef, inst: TrainerInst, strategy: object, by_value: object, several: str | None
) -> object:
    """What DeepSpeed's setup does on one path: clipping by value (``init_deepspeed``), then several
    optimizers or schedulers (``_init_optimizers``, where ``configure_optimizers`` is called)."""
    if strategy is False or (by_value is False and several == "no"):
        return _OK
    if not isinstance(strategy, DeepSpeed):
        return _UNKNOWN
    if by_value is True:
        return Failure("by_value", strategy.text, cls, inst)
    if by_value is not False or several is None or (several != "no" and strategy.own_optimizer):
        return _UNKNOWN  # (how it clips, how many optimizers or whether they are DeepSpeed's own is not known)
    if several == "no":
        return _OK
    return Failure("deepspeed", strategy.text, cls, inst, certain=several == "all")


def by_value_alternatives(model: SemanticModel, inst: TrainerInst) -> list[tuple[object, frozenset]]:
    """Whether the Trainer clips by value on each path: ``gradient_clip_algorithm="value"`` in any
    case (``trainer.py:468-479`` lowers it), False for ``"norm"`` or none, ``"unknown"`` otherwise
    (another string makes ``Trainer(...)`` raise first)."""
    given = argument_values(model, inst, "gradient_clip_algorithm", None)
    if given is None:
        return [(_UNKNOWN, paths.EMPTY)]
    return [(_algorithm(v), p) for v, p in given]


def _algorithm(value: object) -> object:
    if value is None:
        return False
    if not isinstance(value, str) or value.lower() not in ("value", "norm"):
        return _UNKNOWN
    return value.lower() == "value"


def _number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _integer(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


# -- the class: several optimizers or schedulers ------------------------------------------------------
def several_for_deepspeed(model: SemanticModel, cls: ClassRef, auto: bool) -> str | None:
    """Whether ``configure_optimizers`` gives DeepSpeed several optimizers or several schedulers:
    ``"all"`` on every ``return``, ``"some"`` on some, ``"no"``, None where not known. Several
    optimizers under automatic optimisation, and ``optimizer_idx``, fail before (PL003's other
    verdicts): they count as "no"."""
    step = model.hook(cls, "training_step")
    if step is not None and _has_optimizer_idx(step.node):
        return "no"
    configs = model.configure_optimizers(cls)
    if configs is None:
        return None
    states = [_several(c.optimizers, c.schedulers, auto) for c in configs]
    if states and all(s is True for s in states):
        return "all"
    if any(s is True for s in states):
        return "some"
    return None if any(s is None for s in states) else "no"


def _several(optimizers: int | None, schedulers: tuple | None, auto: bool) -> bool | None:
    if optimizers is None:
        return None
    if optimizers > 1:
        return not auto  # automatic: core/optimizer.py refuses several optimizers first
    if schedulers is None:
        return None
    return len(schedulers) > 1


def _has_optimizer_idx(func: ast.AST) -> bool:
    args = getattr(func, "args", None)
    return args is not None and any(a.arg == "optimizer_idx" for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))


# -- the Trainer's strategy ----------------------------------------------------------------------------
def strategy_alternatives(model: SemanticModel, inst: TrainerInst) -> list[tuple[object, frozenset]]:
    """The Trainer's ``strategy`` on each path: a :class:`DeepSpeed` strategy,
    False for another strategy (``"auto"`` never picks DeepSpeed), ``"unknown"``."""
    assert inst.args is not None
    arg = inst.args.get("strategy")
    if arg is None:
        return [(_UNKNOWN if inst.args.open else False, paths.EMPTY)]
    expr, ctx = arg
    inf = model.inference

    def strategies() -> list[tuple[object, frozenset]]:
        values = inf.reached(inf.ev(expr, ctx), ctx.module.stmt_of(expr), ctx)
        return [(_deepspeed(model, v, expr, ctx), paths.path_of(v)) for v in values] or [(_UNKNOWN, paths.EMPTY)]

    return inf.bounded(strategies, [(_UNKNOWN, paths.EMPTY)])


def _deepspeed(model: SemanticModel, v: Value, expr: ast.AST, ctx: Ctx) -> object:
    if isinstance(v, Const):
        if not isinstance(v.value, str):
            return _UNKNOWN
        return (
            DeepSpeed(f'`strategy="{v.value}"`', False) if v.value.lower() in facts.TRAINER_DEEPSPEED_NAMES else False
        )
    if isinstance(v, Instance) and v.call is not None:
        base = _strategy_base(model, v.cls)
        if base is None or base is _UNKNOWN:
            return _UNKNOWN
        if base not in facts.TRAINER_DEEPSPEED_CLASSES:
            return False
        return DeepSpeed(f"`{v.cls.name}(...)` (a `DeepSpeedStrategy`)", not _config_without_optimizer(v.call))
    if isinstance(v, StrategyInst) and v.trainer and v.call is not None:  # `DDPStrategy(...)` of lightning.pytorch
        if not any(q.rsplit(".", 1)[-1] == v.class_name for q in facts.TRAINER_DEEPSPEED_CLASSES):
            return False
        return DeepSpeed("`DeepSpeedStrategy(...)`", not _config_without_optimizer(v.call))
    if isinstance(v, Unknown) and isinstance(expr, ast.Call):
        names = [q.qualname for q in model.inference.ev(expr.func, ctx) if isinstance(q, QualRef)]
        if len(names) != 1 or not names[0].startswith(_TRAINER_STRATEGY_PREFIXES):
            return _UNKNOWN
        if names[0] not in facts.TRAINER_DEEPSPEED_CLASSES:
            return False
        return DeepSpeed("`DeepSpeedStrategy(...)`", not _config_without_optimizer(expr))
    return _UNKNOWN


def _strategy_base(model: SemanticModel, cls: ClassRef) -> str | None:
    """The Trainer strategy class a user class derives from (None: none seen; ``"unknown"`` where
    the class overrides what configures DeepSpeed's optimizers)."""
    inf = model.inference
    for klass in inf.mro(cls):
        if any(isinstance(f, (*FUNC_TYPES, ast.Assign)) and _name(f) in _DEEPSPEED_OVERRIDES for f in klass.node.body):
            return _UNKNOWN
        for b in klass.node.bases:
            for q in inf.ev(b, Ctx(klass.module)):
                if isinstance(q, QualRef) and q.qualname.startswith(_TRAINER_STRATEGY_PREFIXES):
                    return q.qualname
    return None


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Assign):
        return next((t.id for t in node.targets if isinstance(t, ast.Name)), None)
    return getattr(node, "name", None)


def _config_without_optimizer(call: ast.Call) -> bool:
    """The constructor call certainly gives no DeepSpeed config with an ``"optimizer"`` entry
    (with one, ``configure_optimizers`` is never called, ``strategies/deepspeed.py:497``)."""
    if (
        any(k.arg is None for k in call.keywords)
        or any(isinstance(a, ast.Starred) for a in call.args)
        or len(call.args) > 3
    ):
        return False
    config = next((k.value for k in call.keywords if k.arg == "config"), None)
    if config is None or (isinstance(config, ast.Constant) and config.value is None):
        return True
    if not isinstance(config, ast.Dict):
        return False
    keys = [k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None for k in config.keys]
    return None not in keys and "optimizer" not in keys
