"""What a Trainer's ``callbacks=`` holds, one alternative per path: the checkpoint callbacks in
order (PL005: Lightning uses the first one, ``trainer.checkpoint_callback``) or the monitoring
callbacks (PL002: each ``ModelCheckpoint``/``EarlyStopping`` with its arguments)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Callable, Optional

from fabric_lsp import facts
from fabric_lsp.engine.lightning.fabric_args import pytorch_class_of
from fabric_lsp.engine.program.lightning_modules import MonitorCallback
from fabric_lsp.engine.python import paths
from fabric_lsp.engine.python.astwalk import walk
from fabric_lsp.engine.python.values import ClassRef, Const, Ctx, QualRef, Seq, Value
from fabric_lsp.engine.semantic.model import SemanticModel

#: Lightning's callbacks that are not a ``Checkpoint`` (the last part of their qualified name)
_NOT_CHECKPOINTS = frozenset(
    {
        "Callback",
        "EarlyStopping",
        "LearningRateMonitor",
        "RichProgressBar",
        "TQDMProgressBar",
        "ProgressBar",
        "ModelSummary",
        "RichModelSummary",
        "StochasticWeightAveraging",
        "GradientAccumulationScheduler",
        "DeviceStatsMonitor",
        "Timer",
        "BackboneFinetuning",
        "BaseFinetuning",
        "LambdaCallback",
        "ThroughputMonitor",
        "ModelPruning",
        "BatchSizeFinder",
        "LearningRateFinder",
        "BasePredictionWriter",
        "SpikeDetection",
    }
)
_CALLBACK_PACKAGES = (
    "lightning.pytorch.callbacks",
    "pytorch_lightning.callbacks",
    "lightning.pytorch",
    "pytorch_lightning",
)


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint callback: a ``ModelCheckpoint`` with the ``save_top_k`` values it may have
    (None: not known), or another ``Checkpoint`` (``best_model_path``-less: no error)."""

    call: ast.Call | None  # None: the one Lightning adds
    model_checkpoint: bool
    save_top_k: tuple[object, ...] | None = None


@dataclass(frozen=True)
class Callbacks:
    """One alternative of ``callbacks=``: the callbacks a rule asks about, in order, on ``path``."""

    items: tuple
    path: frozenset = paths.EMPTY


#: what one element of the list is to a rule: the items it stands for ([] for none), None where not known
Element = Callable[[SemanticModel, ast.AST], Optional[list]]


def callback_alternatives(model: SemanticModel, arg: tuple[ast.AST, Ctx] | None, open_: bool) -> list[Callbacks] | None:
    """The alternatives of ``callbacks=`` as their checkpoint callbacks (None: some is not fully known)."""
    return _alternatives(model, arg, open_, _element)


def monitor_alternatives(model: SemanticModel, arg: tuple[ast.AST, Ctx] | None, open_: bool) -> list[Callbacks] | None:
    """The alternatives of ``callbacks=`` as their ``ModelCheckpoint``/``EarlyStopping`` callbacks
    (:class:`MonitorCallback`); None where some is not fully known, or where a callback of the
    project's own may log a metric (``pl_module.log``) or write ``callback_metrics``."""
    return _alternatives(model, arg, open_, _monitor_element)


def _alternatives(
    model: SemanticModel, arg: tuple[ast.AST, Ctx] | None, open_: bool, element: Element
) -> list[Callbacks] | None:
    if arg is None:
        return None if open_ else [Callbacks(())]
    expr, ctx = arg
    if ctx.module is not model.module:
        return None
    if isinstance(expr, ast.Call):
        one = element(model, expr)
        return None if one is None else [Callbacks(tuple(one))]
    out: list[Callbacks] = []
    for v in _evaluated(model, expr, ctx):
        alt = _alternative(model, expr, v, element)
        if alt is None:
            return None
        out.append(alt)
    return out or None


def _evaluated(model: SemanticModel, expr: ast.AST, ctx: Ctx) -> list[Value]:
    inf = model.inference
    return inf.bounded(lambda: inf.reached(inf.ev(expr, ctx), ctx.module.stmt_of(expr), ctx), [])


def _alternative(model: SemanticModel, expr: ast.AST, v: Value, element: Element) -> Callbacks | None:
    if isinstance(v, Const) and v.value is None:
        return Callbacks((), paths.path_of(v))
    if not isinstance(v, Seq) or v.ctx is None or v.ctx.module is not model.module or len(v.items) != v.length:
        return None
    if not (v.fixed or isinstance(expr, (ast.List, ast.Tuple)) or _unchanged_name(model, expr)):
        return None
    found: list = []
    for item in v.items:
        part = element(model, item)
        if part is None:
            return None
        found += part
    return Callbacks(tuple(found), paths.path_of(v))


def _unchanged_name(model: SemanticModel, expr: ast.AST) -> bool:
    """``expr`` is a name bound once in the document and never appended to, extended, sliced or
    ``+=``-ed (the list display it is bound to is what the Trainer gets)."""
    if not isinstance(expr, ast.Name):
        return False
    name = re.escape(expr.id)
    text = model.module.text
    mutated = re.search(rf"\b{name}\s*(?:\.\s*(?:append|extend|insert|pop|remove|clear)\b|\[|\+=|\*=)", text)
    return mutated is None and _bindings(model, expr.id) == 1


def _bindings(model: SemanticModel, name: str) -> int:
    tree = model.module.tree
    assert tree is not None
    return sum(1 for n in walk(tree) if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load))


def _construction(model: SemanticModel, item: ast.AST) -> ast.Call | None:
    """The call an element of the list is: itself, or the call a name is bound to once."""
    if isinstance(item, ast.Name):
        item = _bound_call(model, item.id)  # type: ignore[assignment]
    return item if isinstance(item, ast.Call) else None


def _element(model: SemanticModel, item: ast.AST) -> list[Checkpoint] | None:
    """The checkpoint callback an element of the list is ([] for another callback), None where
    not known."""
    call = _construction(model, item)
    mc = model.monitor_callback(call) if call is not None else None
    if call is None or mc is None:
        return None if call is None else _by_class(model, call)
    return [Checkpoint(call, True, mc.argument("save_top_k"))] if mc.kind == facts.MODEL_CHECKPOINT_CLASS else []


def _monitor_element(model: SemanticModel, item: ast.AST) -> list[MonitorCallback] | None:
    """The monitoring callback an element is ([] for a callback that neither monitors nor logs)."""
    call = _construction(model, item)
    mc = model.monitor_callback(call) if call is not None else None
    if call is None or mc is not None:
        return None if call is None else [mc]  # type: ignore[list-item]
    callees = model.values(call.func)
    if not callees or not all(_kind(model, v) == "other" for v in callees):
        return None
    return None if any(isinstance(v, ClassRef) and _may_log(v) for v in callees) else []


#: what a callback of the project's own may write metrics through
_METRIC_WRITERS = frozenset(facts.LOG_METHODS) | {"callback_metrics", "logged_metrics"}


#: receivers whose ``.log(...)`` is not a LightningModule's: a logger's experiment (W&B, TensorBoard
#: through ``trainer.logger.experiment``), tracking and math libraries (``torch.log(x)``)
_NOT_MODULES = frozenset(
    {
        "logger",
        "loggers",
        "experiment",
        "wandb",
        "mlflow",
        "neptune",
        "comet_ml",
        "logging",
        "torch",
        "np",
        "numpy",
        "math",
        "F",
        "jnp",
        "scipy",
    }
)


def _may_log(cls: ClassRef) -> bool:
    """Whether a project callback may feed ``callback_metrics``: a ``.log(name, value)``/``.log_dict(d)``
    on what may be the LightningModule (``pl_module.log``), or a write of the metrics dicts."""
    for n in walk(cls.node):
        if (
            isinstance(n, ast.Attribute)
            and n.attr in _METRIC_WRITERS
            and not (n.attr in facts.LOG_METHODS and _not_a_module_log(n, cls))
        ):
            return True
    return False


def _not_a_module_log(attr: ast.Attribute, cls: ClassRef) -> bool:
    """A ``.log``/``.log_dict`` that cannot be the LightningModule's: not called with a key and a
    value (a tensor's ``x.log()``), or on a logger, an experiment, a tracking or math library."""
    call = cls.module.parent_of(attr)
    if not (isinstance(call, ast.Call) and call.func is attr):
        return False  # the method handed on: may be anything
    given = len(call.args) + len(call.keywords)
    if given < (2 if attr.attr == "log" else 1):
        return True
    rcv = attr.value
    while isinstance(rcv, (ast.Attribute, ast.Subscript, ast.Call)):
        if isinstance(rcv, ast.Attribute) and rcv.attr in _NOT_MODULES:
            return True
        rcv = rcv.value if not isinstance(rcv, ast.Call) else rcv.func
    return isinstance(rcv, ast.Name) and rcv.id in _NOT_MODULES


def _bound_call(model: SemanticModel, name: str) -> ast.AST | None:
    """The ``Call`` a name is bound to by its only binding in the document (``ckpt = ModelCheckpoint(...)``)."""
    if _bindings(model, name) != 1:
        return None
    tree = model.module.tree
    assert tree is not None
    for n in ast.walk(tree):
        if (
            isinstance(n, ast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name)
            and n.targets[0].id == name
        ):
            return n.value
    return None


def _by_class(model: SemanticModel, call: ast.Call) -> list[Checkpoint] | None:
    callees = model.values(call.func)
    if not callees:
        return None
    kinds = {_kind(model, v) for v in callees}
    if kinds == {"other"}:
        return []
    if kinds == {"checkpoint"}:
        return [Checkpoint(call, False)]
    return None


def _kind(model: SemanticModel, v: Value) -> str | None:
    if isinstance(v, QualRef):
        package, _, last = v.qualname.rpartition(".")
        if package.startswith(_CALLBACK_PACKAGES) and last in _NOT_CHECKPOINTS:
            return "other"
        if package.startswith(_CALLBACK_PACKAGES) and last == "OnExceptionCheckpoint":
            return "checkpoint"
        return None
    base = pytorch_class_of(model.inference, v)
    return "other" if base in (facts.CALLBACK_CLASS, facts.EARLY_STOPPING_CLASS) else None
