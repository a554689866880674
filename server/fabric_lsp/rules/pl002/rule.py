"""PL002: ``ModelCheckpoint(monitor=K)``, ``EarlyStopping(monitor=K)`` or a ``ReduceLROnPlateau``
scheduler's ``"monitor": K`` where no key the fitted LightningModule logs can be ``K``."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from fabric_lsp import facts
from fabric_lsp.engine.findings import Certainty, Explanation, Located, Related, Verdict
from fabric_lsp.engine.lightning import lightning_cli
from fabric_lsp.engine.program.lightning_modules import LightningClass, MonitorCallback
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.python.values import ClassRef, Instance, LightningCLIInst, TrainerInst, Unknown
from fabric_lsp.engine.rule import Rule, RuleContext
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.rules.pl002 import keys
from fabric_lsp.rules.pl002.docs import DOC, INVALID, SUMMARY, VALID
from fabric_lsp.rules.prefilters import PREFILTERS
from fabric_lsp.rules.trainer_args import argument_values
from fabric_lsp.rules.trainer_callbacks import Callbacks, monitor_alternatives

PLATEAU = "ReduceLROnPlateau"
#: kind → (Lightning's message for ``{key}``, where it raises)
_RAISES = {
    facts.MODEL_CHECKPOINT_CLASS: (
        "MisconfigurationException: `ModelCheckpoint(monitor={key!r})` could not find the monitored key in the"
        " returned metrics (once a validation loop has run)",
        "lightning/pytorch/callbacks/model_checkpoint.py:579-587",
    ),
    facts.EARLY_STOPPING_CLASS: (
        "RuntimeError: Early stopping conditioned on metric `{key}` which is not available",
        "lightning/pytorch/callbacks/early_stopping.py:164-175",
    ),
    PLATEAU: (
        "MisconfigurationException: ReduceLROnPlateau conditioned on metric {key} which is not available",
        "lightning/pytorch/loops/training_epoch_loop.py:487-499",
    ),
}
#: Trainer arguments that may stop `fit` before a training epoch (or a validation loop) ends, or
#: move the `EarlyStopping` check to a validation that may not run → whether a value leaves the
#: check certain (a limit of at least one batch, no step or time limit, validation every epoch)
_LIMITS = {
    "limit_train_batches": lambda v: _positive(v),
    "limit_val_batches": lambda v: _positive(v),
    "overfit_batches": lambda v: v is None or v == 0,
    "max_steps": lambda v: v is None or v == -1,
    "max_time": lambda v: v is None,
    "val_check_interval": lambda v: v is None or v == 1.0,
    "check_val_every_n_epoch": lambda v: v is None or v == 1,
}


def _positive(v: object) -> bool:
    return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0)


#: ``Trainer.fit``'s positional parameters after ``model``
_FIT_TRAIN, _FIT_VAL, _FIT_DATAMODULE = 1, 2, 3


@dataclass(frozen=True)
class Era:
    """How the analysed Lightning version checks the monitors (:data:`facts.SINCE`)."""

    #: 1.4 on: the checks of 2.6.6 (``ModelCheckpoint``, ``ReduceLROnPlateau``, ``EarlyStopping``'s
    #: ``check_on_train_epoch_end=None``); before, only ``EarlyStopping`` is judged, at the end of
    #: a validation, and a logged key may give a name at any level
    as_2x: bool
    #: before 1.3: a hook's returned ``"log"``/``"progress_bar"`` dict fed the monitors too
    returns_feed: bool


_ERA_2X = Era(True, False)
#: where 1.2/1.3 raise: ``_validate_condition_metric`` from ``on_validation_end``
_EARLY_STOPPING_1X = "pytorch_lightning/callbacks/early_stopping.py:131-132 (1.2), :134 (1.3)"


def _era(version: str | None) -> Era | None:
    if not facts.has_feature("early_stopping_strict_check", version):
        return None
    return Era(
        facts.has_feature("monitor_checks_as_2x", version), not facts.has_feature("monitors_see_logged_only", version)
    )


@dataclass(frozen=True)
class Monitor:
    """A key a check of ``fit`` monitors: ``certain`` where a missing key certainly raises."""

    key: str
    kind: str
    node: ast.AST
    module: ModuleInfo
    certain: bool


class PL002(Rule):
    code = "PL002"
    name = "monitored-metric-never-logged"
    summary = SUMMARY
    doc = DOC
    valid = VALID
    invalid = INVALID
    prefilter = PREFILTERS["PL002"]

    def sites(self, model: SemanticModel) -> list[ast.AST]:
        return [*model.method_calls("fit"), *_cli_calls(model)]

    def verdict(self, model: SemanticModel, site: ast.AST, ctx: RuleContext) -> Verdict | None:
        assert isinstance(site, ast.Call)
        era = _era(ctx.lightning_version)
        if era is None:
            return None  # before 1.2 the monitors' checks were not read
        if not isinstance(site.func, ast.Attribute) or site.func.attr != "fit":
            cli = _cli(model, site)
            return self._cli_verdict(model, site, cli) if cli is not None and era.as_2x else None
        classes, unknown = model.entry_point_classes(site)
        if unknown or not classes or _metrics_written(model):
            return None
        if any(model.hook(lc.cls, "training_step") is None for lc in classes):
            return None  # `fit` raises first: "No `training_step()` method defined" (configuration_validator.py:52)
        logged = [model.logged(lc.cls) for lc in classes]
        if not all(lg.complete for lg in logged):
            return None
        if era.returns_feed and any(model.may_return_legacy_results(lc.cls) for lc in classes):
            return None
        insts = _trainers(model, site)
        if insts is None and not (era.as_2x and _scheduler_monitors_of(model, classes)):
            return self._unknown(model, site, classes)
        shared = _callback_monitors(model, site, classes, era)
        trainer_certain = insts is not None and _unlimited(model, insts)
        for lc, lg in zip(classes, logged):
            schedulers = _scheduler_monitors(model, lc, trainer_certain) if era.as_2x else []
            for m in shared + schedulers:
                if keys.always_available(m.kind, m.key, era.as_2x) or any(
                    keys.may_give(c, m.key, era.as_2x) for c in lg.calls
                ):
                    continue
                certain = m.certain and all(
                    not any(keys.may_give(c, m.key, era.as_2x) for c in other.calls) for other in logged
                )
                return self._verdict(model, site, lc, m, keys.logged_names(lg.calls, era.as_2x), certain, era)
        return None

    def _cli_verdict(self, model: SemanticModel, site: ast.Call, cli: LightningCLIInst) -> Verdict | None:
        """A ``LightningCLI(Model, trainer_defaults={"callbacks": [...]})`` whose ``fit`` subcommand
        monitors a key ``Model`` never logs: the callbacks given there are always the Trainer's,
        ``configure_optimizers`` is the module's, but the subcommand and every other Trainer
        argument come from the command line, so it is a warning at most."""
        classes = _cli_classes(model, cli)
        if not classes or _metrics_written(model):
            return None
        logged = [model.logged(lc.cls) for lc in classes]
        if not all(lg.complete for lg in logged):
            return None
        monitors = _cli_callback_monitors(model, cli, classes)
        for lc, lg in zip(classes, logged):
            for m in monitors + _scheduler_monitors(model, lc, False):
                if keys.always_available(m.kind, m.key) or any(keys.may_give(c, m.key) for c in lg.calls):
                    continue
                return self._verdict(model, site, lc, m, keys.logged_names(lg.calls), False, _ERA_2X, cli=True)
        return None

    def _unknown(self, model: SemanticModel, site: ast.Call, classes: list[LightningClass]) -> Verdict | None:
        """The hint (``report-unknown``) where the Trainer is not known statically (a
        ``LightningCLI``'s, one from a config): its monitoring callbacks are not checked."""
        assert isinstance(site.func, ast.Attribute)
        reasons = [v.reason for v in model.values(site.func.value) if isinstance(v, Unknown) and v.reason]
        if not reasons:
            return None
        rcv = model.segment(site.func.value)
        message = (
            f"The callbacks of `{rcv}` are not known statically ({reasons[0]}): the keys their `monitor`s"
            f" name are not checked against what `{classes[0].name}` logs."
        )
        return Verdict(self.code, model.span(site), self.unknown_finding(model, site, message))

    def _verdict(
        self,
        model: SemanticModel,
        site: ast.Call,
        lc: LightningClass,
        m: Monitor,
        names: list[str],
        certain: bool,
        era: Era,
        cli: bool = False,
    ) -> Verdict:
        text, where = _RAISES[m.kind]
        where = where if era.as_2x else _EARLY_STOPPING_1X
        verb = "raises" if certain else "may raise (on some paths)"
        logged = ", ".join(f"`{n}`" for n in names[:8]) or "nothing"
        hint = keys.closest(m.key, names)
        runner = "its `fit` subcommand may raise" if cli else f"`trainer.fit` {verb}"
        message = (
            f"`{m.key}` is monitored by {_what(m)} but no key `{lc.name}` logs can be it: {runner}"
            f" {text.format(key=m.key)} ({where}). `{lc.name}` logs {logged}."
            + (f" Did you mean `{hint}`?" if hint else "")
        )
        here = m.module is model.module
        span = model.span(m.node) if here else model.span(site)
        fitted = (
            f"this `LightningCLI` fits `{lc.name}` when its command line says `fit`"
            if cli
            else f"`{lc.name}` is fitted here"
        )
        related = [Related(fitted, model.span(site), None)] if here else []
        if not here:
            related.append(Related(f"{_what(m)} is built here", m.module.span(m.node), m.module.path))
        finding = self.finding(
            Certainty.CERTAIN if certain else Certainty.POSSIBLE, message, span, tuple(related), lightning=where
        )
        return Verdict(
            self.code,
            span,
            finding,
            Explanation(f"**Monitored metric never logged** — {message}", (Located(message),), ()),
        )


def _what(m: Monitor) -> str:
    return f"`{m.kind.rsplit('.', 1)[-1]}`" if m.kind != PLATEAU else "the `ReduceLROnPlateau` scheduler"


#: a write to ``callback_metrics`` (what the monitors read): an item set, an update, a rebinding
_WRITES_METRICS = re.compile(
    r"callback_metrics\s*(?:\[[^\]]*\]\s*=(?!=)|\.\s*(?:update|setdefault|__setitem__)\b|=(?!=))"
)


def _metrics_written(model: SemanticModel) -> bool:
    """Some module of the workspace may write ``trainer.callback_metrics`` itself."""
    modules = [model.module, *model.other_modules_mentioning("callback_metrics")]
    return any(_WRITES_METRICS.search(m.text) for m in modules)


# -- the Trainer's callbacks -----------------------------------------------------------------------------
def _trainers(model: SemanticModel, site: ast.Call) -> list[TrainerInst] | None:
    assert isinstance(site.func, ast.Attribute)
    insts = model.values(site.func.value)
    if not insts or not all(isinstance(v, TrainerInst) and v.args is not None for v in insts):
        return None
    return insts  # type: ignore[return-value]


def _callback_monitors(model: SemanticModel, site: ast.Call, classes: list[LightningClass], era: Era) -> list[Monitor]:
    """The keys the ``ModelCheckpoint``/``EarlyStopping`` callbacks of the fit's Trainer monitor."""
    insts = _trainers(model, site)
    if insts is None or any(model.hook(lc.cls, "configure_callbacks") is not None for lc in classes):
        return []  # `configure_callbacks` replaces the Trainer's callbacks of the same type
    alternatives: list[Callbacks] = []
    for inst in insts:
        assert inst.args is not None
        alts = monitor_alternatives(model, inst.args.get("callbacks"), inst.args.open)
        if alts is None:
            return []
        alternatives += alts
    callbacks = {id(mc.call): mc for alt in alternatives for mc in alt.items}
    out: list[Monitor] = []
    for mc in callbacks.values():
        if not era.as_2x and mc.kind != facts.EARLY_STOPPING_CLASS:
            continue  # 1.x before 1.4: only `EarlyStopping` is judged
        everywhere = all(any(x.call is mc.call for x in alt.items) for alt in alternatives)
        out += _callback_monitor(model, site, insts, classes, mc, everywhere, era)
    return out


def _callback_monitor(
    model: SemanticModel,
    site: ast.Call,
    insts: list[TrainerInst],
    classes: list[LightningClass],
    mc: MonitorCallback,
    everywhere: bool,
    era: Era,
) -> list[Monitor]:
    """One monitor per key the callback's ``monitor`` may be (certain only where it is that key
    on every path)."""
    values = mc.argument("monitor")
    if not values or not all(v is None or isinstance(v, str) for v in values):
        return []
    if mc.kind == facts.MODEL_CHECKPOINT_CLASS and not _saves_every_epoch(mc):
        return []
    gate = _gate(mc, "save_top_k", 0) if mc.kind == facts.MODEL_CHECKPOINT_CLASS else _gate(mc, "strict", False)
    reached = _callbacks_run(model, insts)
    ends = (True,) if mc.kind == facts.MODEL_CHECKPOINT_CLASS else _early_stopping_ends(model, insts, mc, era)
    if gate is None or reached is None or ends is None:
        return []
    certain = everywhere and len(values) == 1 and gate and reached and len(set(ends)) == 1
    if any(ends):
        validation = _validation_runs(model, site, classes)
        if validation is None and all(ends):
            return []  # no validation loop: `ModelCheckpoint` only warns, `EarlyStopping` never checks there
        certain = certain and validation is True
    return [Monitor(key, mc.kind, mc.call, model.module, certain) for key in values if isinstance(key, str)]


def _early_stopping_ends(
    model: SemanticModel, insts: list[TrainerInst], mc: MonitorCallback, era: Era
) -> tuple[bool, ...] | None:
    """Per possible ``check_on_train_epoch_end``, whether ``EarlyStopping`` checks at the end of a
    validation (True) or of the training epoch (False); None where not known. 2.x (and 1.4 on):
    ``None`` means the training epoch's end when validation runs every epoch
    (``callbacks/early_stopping.py:135-139``); 1.3 checks at a validation's end unless it is True
    (``early_stopping.py:164-173`` of 1.3.8); 1.2 always there (its ``__init__`` takes no
    such argument)."""
    values = mc.argument("check_on_train_epoch_end")
    if values is None or not all(v is None or isinstance(v, bool) for v in values):
        return None
    if not era.as_2x:
        given = any(v is not None for v in values)
        return None if given and era.returns_feed else tuple(v is not True for v in values)
    out: list[bool] = []
    for v in values:
        out += [not v] if v is not None else _default_ends(model, insts)
    return tuple(out)


def _default_ends(model: SemanticModel, insts: list[TrainerInst]) -> list[bool]:
    """``check_on_train_epoch_end=None``: the training epoch's end where validation runs every
    epoch and once per epoch (``val_check_interval == 1.0 and check_val_every_n_epoch == 1``), a
    validation's end where it does not; both where the paths of the Trainers differ or are not known."""
    ends: set[bool] = set()
    for inst in insts:
        flags = [_neutral(model, inst, name) for name in ("val_check_interval", "check_val_every_n_epoch")]
        if any(f is None for f in flags):
            return [False, True]
        every_epoch = all(False not in f for f in flags)  # type: ignore[operator]
        never_every_epoch = any(True not in f for f in flags)  # type: ignore[operator]
        if not (every_epoch or never_every_epoch):
            return [False, True]
        ends.add(not every_epoch)
    return sorted(ends)


#: ``ModelCheckpoint``'s schedule → its value that saves (and checks the monitor) at every epoch's end
_EVERY_EPOCH = {"every_n_epochs": (None, 1), "every_n_train_steps": (None, 0), "train_time_interval": (None,)}


def _saves_every_epoch(mc: MonitorCallback) -> bool:
    """Whether the ``ModelCheckpoint`` checks its monitor at every epoch's end on every path: another
    schedule (``every_n_epochs=2``, ``every_n_train_steps=N``, a time interval) checks only once
    that many epochs, steps or seconds have passed, which ``fit`` may never reach
    (``callbacks/model_checkpoint.py:492,513``)."""
    for name, neutral in _EVERY_EPOCH.items():
        values = mc.argument(name)
        if values is None or any(v not in neutral or isinstance(v, bool) for v in values):
            return False
    return True


def _gate(mc: MonitorCallback, name: str, off: object) -> bool | None:
    """True: the argument never turns the check off; False: on some paths; None: on all, or not known."""
    values = mc.argument(name)
    if not values:
        return None
    on = [v for v in values if v != off or isinstance(v, bool) != isinstance(off, bool)]
    return None if not on else len(on) == len(values)


def _callbacks_run(model: SemanticModel, insts: list[TrainerInst]) -> bool | None:
    """True: the callbacks check on every path of the Trainer (no ``fast_dev_run``, no limit that
    may end ``fit`` first); False: on some; None: on none, or not known."""
    runs = []
    for inst in insts:
        fast = argument_values(model, inst, "fast_dev_run", False)
        if fast is None:
            return None
        runs += [
            not value or (isinstance(value, int) and not isinstance(value, bool) and value < 0) for value, _ in fast
        ]
    if not any(runs):
        return None
    return all(runs) and _unlimited(model, insts)


def _unlimited(model: SemanticModel, insts: list[TrainerInst]) -> bool:
    """No path of the Trainer sets a limit that may end ``fit`` (or skip validation) first."""
    flags = [_neutral(model, inst, name) for inst in insts for name in _LIMITS]
    return all(f is not None and False not in f for f in flags)


def _neutral(model: SemanticModel, inst: TrainerInst, name: str) -> list[bool] | None:
    """Per path of the Trainer, whether the argument ``name`` of :data:`_LIMITS` leaves the checks
    certain (None: not known)."""
    values = argument_values(model, inst, name, None)
    return None if values is None else [_LIMITS[name](v) for v, _ in values]


def _validation_runs(model: SemanticModel, site: ast.Call, classes: list[LightningClass]) -> bool | None:
    """True: every class has a ``validation_step`` and validation data is certainly given; False:
    it may run; None: no class validates (``ModelCheckpoint`` then only warns)."""
    steps = [model.hook(lc.cls, "validation_step") is not None for lc in classes]
    if not any(steps):
        return None
    return all(steps) and all(_validation_data(model, site, lc) for lc in classes)


def _validation_data(model: SemanticModel, site: ast.Call, lc: LightningClass) -> bool:
    """Validation batches are certainly given: ``val_dataloaders``, a datamodule (also as the second
    argument) with ``val_dataloader``, or the module's own ``val_dataloader``."""
    given = _fit_argument(site, "val_dataloaders", _FIT_VAL)
    if given is not None and not (isinstance(given, ast.Constant) and given.value is None):
        return True
    if model.hook(lc.cls, "val_dataloader") is not None:
        return True
    for name, index in (("datamodule", _FIT_DATAMODULE), ("train_dataloaders", _FIT_TRAIN)):
        expr = _fit_argument(site, name, index)
        values = model.values(expr) if expr is not None else []
        if values and all(isinstance(v, Instance) and model.hook(v.cls, "val_dataloader") is not None for v in values):
            return True
    return False


def _fit_argument(site: ast.Call, name: str, index: int) -> ast.expr | None:
    if len(site.args) > index and not any(isinstance(a, ast.Starred) for a in site.args[: index + 1]):
        return site.args[index]
    return next((k.value for k in site.keywords if k.arg == name), None)


def _scheduler_monitors_of(model: SemanticModel, classes: list[LightningClass]) -> list[Monitor]:
    return [m for lc in classes for m in _scheduler_monitors(model, lc, False)]


# -- the module's schedulers ------------------------------------------------------------------------------
def _scheduler_monitors(model: SemanticModel, lc: LightningClass, trainer_certain: bool) -> list[Monitor]:
    """The keys ``ReduceLROnPlateau`` schedulers of ``configure_optimizers`` monitor at the end of
    each training epoch (under automatic optimisation only: ``training_epoch_loop.py:475``);
    certain only where the Trainer sets no limit that may end ``fit`` first (``trainer_certain``)."""
    automatic = model.automatic_optimization(lc.cls)
    configs = model.configure_optimizers(lc.cls)
    if automatic is False or not configs:
        return []
    hook = model.hook(lc.cls, "configure_optimizers")
    assert hook is not None
    out: list[Monitor] = []
    for config in configs:
        for s in config.schedulers or ():
            if (
                s.plateau is True
                and s.monitor is not None
                and s.monitor_known
                and s.interval == "epoch"
                and s.strict is not False
            ):
                certain = automatic is True and len(configs) == 1 and s.strict is True and trainer_certain
                out.append(Monitor(s.monitor, PLATEAU, s.node, hook.owner.module, certain))
    return out


# -- LightningCLI ------------------------------------------------------------------------------------------
def _cli_calls(model: SemanticModel) -> list[ast.Call]:
    """Calls of a name ending in ``CLI`` (``LightningCLI(...)``, a project's subclass)."""
    m = model.module
    if m.tree is None or "CLI" not in m.text:
        return []
    return m.calls_named_like(lambda name: name.endswith("CLI"))


def _cli(model: SemanticModel, site: ast.Call) -> LightningCLIInst | None:
    values = model.values(site)
    return values[0] if len(values) == 1 and isinstance(values[0], LightningCLIInst) else None


def _cli_classes(model: SemanticModel, cli: LightningCLIInst) -> list[LightningClass]:
    """The LightningModule classes a CLI that may run ``fit`` fits (none where the config may pick
    another class)."""
    if "fit" not in cli.subcommands or cli.model_subclasses or not cli.models:
        return []
    out = []
    for v in cli.models:
        lc = model.lightning_class(v) if isinstance(v, ClassRef) else None
        if lc is None or lc.base != facts.LIGHTNING_MODULE_CLASS:
            return []
        out.append(lc)
    return out


def _cli_callback_monitors(model: SemanticModel, cli: LightningCLIInst, classes: list[LightningClass]) -> list[Monitor]:
    """The monitors of the ``callbacks`` of ``trainer_defaults`` (never certain: the command line
    may add limits, ``fast_dev_run``, or choose another subcommand)."""
    given = lightning_cli.default_argument(cli, "callbacks")
    written = lightning_cli.defaults_written(cli)
    if given is None or written is None or written & {"fast_dev_run", *_LIMITS}:
        return []
    if any(model.hook(lc.cls, "configure_callbacks") is not None for lc in classes):
        return []
    alternatives = monitor_alternatives(model, given, False)
    if alternatives is None:
        return []
    steps = [model.hook(lc.cls, "validation_step") is not None for lc in classes]
    out: list[Monitor] = []
    for mc in {id(mc.call): mc for alt in alternatives for mc in alt.items}.values():
        values = mc.argument("monitor")
        checkpoint = mc.kind == facts.MODEL_CHECKPOINT_CLASS
        gate = _gate(mc, "save_top_k", 0) if checkpoint else _gate(mc, "strict", False)
        if not values or gate is None or (checkpoint and not any(steps)):
            continue
        out += [Monitor(key, mc.kind, mc.call, model.module, False) for key in values if isinstance(key, str)]
    return out
