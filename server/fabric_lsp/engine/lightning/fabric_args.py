"""What a ``Fabric(...)`` call's arguments are, wherever they are written (:class:`ArgumentSet`),
and the strategies they give, from the ``strategy=``, ``accelerator=`` and ``devices=``
arguments."""

from __future__ import annotations

import ast

from fabric_lsp import facts
from fabric_lsp.engine.lightning import configurations as configuration
from fabric_lsp.engine.lightning import connector as lightning
from fabric_lsp.engine.python import calls, paths
from fabric_lsp.engine.python.astwalk import walk
from fabric_lsp.engine.python.modules import FUNC_TYPES
from fabric_lsp.engine.python.values import (
    ArgumentSet,
    ClassRef,
    Ctx,
    DictVal,
    Evaluator,
    FabricInst,
    KwargsVal,
    Origin,
    QualRef,
    StrategyChoice,
    TrainerInst,
    Value,
)
from fabric_lsp.facts import Kind

#: at most this many argument sets (``**cfg`` with alternatives, merged dicts) per ``Fabric(...)``
MAX_ARGUMENT_SETS = 8


def keyword_sets(ev: Evaluator, keywords: list[ast.keyword], ctx: Ctx) -> list[ArgumentSet]:
    """The argument sets a list of call keywords gives (``**x`` expanded where it is known)."""
    sets = [ArgumentSet()]
    for kw in keywords:
        part = [ArgumentSet(((kw.arg, kw.value, ctx),))] if kw.arg is not None else dict_sets(ev, kw.value, ctx)
        sets = [m for a in sets for b in part if (m := a.merged(b)) is not None][:MAX_ARGUMENT_SETS]
    return sets


def dict_sets(ev: Evaluator, expr: ast.AST, ctx: Ctx) -> list[ArgumentSet]:
    """The entries a ``**expr`` may hold: one set per alternative of ``expr``."""
    out: list[ArgumentSet] = []
    for v in ev.ev(expr, ctx):
        on_path = ArgumentSet(path=paths.path_of(v))
        if isinstance(v, DictVal):
            found = _display_sets(ev, v.node, v.ctx)
        elif isinstance(v, KwargsVal):
            found = keyword_sets(ev, list(v.node.keywords), v.ctx)
            if v.node.args:  # dict(base, key=...): the positional mapping comes first
                found = [
                    m for b in dict_sets(ev, v.node.args[0], v.ctx) for a in found if (m := b.merged(a)) is not None
                ]
        else:
            found = [ArgumentSet(open=True)]
        out += [m for a in found if (m := on_path.merged(a)) is not None]
    return out[:MAX_ARGUMENT_SETS] or [ArgumentSet(open=True)]


def _display_sets(ev: Evaluator, node: ast.Dict, ctx: Ctx) -> list[ArgumentSet]:
    sets = [ArgumentSet()]
    for key, value in zip(node.keys, node.values):
        if key is None:
            part = dict_sets(ev, value, ctx)
        elif isinstance(key, ast.Constant) and isinstance(key.value, str):
            part = [ArgumentSet(((key.value, value, ctx),))]
        else:
            part = [ArgumentSet(open=True)]
        sets = [m for a in sets for b in part if (m := a.merged(b)) is not None][:MAX_ARGUMENT_SETS]
    return sets


def argument_sets(
    ev: Evaluator, call: ast.Call, ctx: Ctx, cls: ClassRef | None = None, base: ArgumentSet | None = None
) -> list[ArgumentSet]:
    """The argument sets of ``Fabric(...)`` (or of a subclass, or of a partial of either):
    ``base`` holds arguments a ``functools.partial`` already bound."""
    sets = keyword_sets(ev, list(call.keywords), ctx)
    if base is not None:
        sets = [m for s in sets if (m := base.merged(s)) is not None]
    if cls is not None:
        forwarded = subclass_forwarded(ev, cls, call, ctx)
        if forwarded is not None:
            return forwarded
    return sets


def subclass_forwarded(ev: Evaluator, cls: ClassRef, call: ast.Call, ctx: Ctx) -> list[ArgumentSet] | None:
    """The arguments a ``Fabric`` subclass's ``__init__`` passes to ``super().__init__``."""
    for klass in ev.mro(cls):
        for item in klass.node.body:
            if isinstance(item, FUNC_TYPES) and item.name == "__init__":
                env = calls.bind_call(ev, item, call, ctx, skip=1) + ctx.env
                for sup in walk(item):
                    if (
                        isinstance(sup, ast.Call)
                        and isinstance(sup.func, ast.Attribute)
                        and sup.func.attr == "__init__"
                    ):
                        return keyword_sets(ev, list(sup.keywords), Ctx(klass.module, env, ctx.depth))
                return None
    return None


def fabric_choices(ev: Evaluator, args: ArgumentSet) -> tuple[StrategyChoice, ...]:
    """The strategies a Fabric built with ``args`` can have, as Lightning's connector resolves
    them (:mod:`fabric_lsp.engine.lightning.connector`) on each machine the configuration means. A
    configuration for which ``Fabric(...)`` itself raises reaches no later call: it adds no
    choice, unless every one does."""
    out: list[StrategyChoice] = []
    failing: list[StrategyChoice] = []
    groups: dict[tuple, list[configuration.Scenario]] = {}
    for scenario in configuration.scenarios_of(ev, args):
        groups.setdefault(scenario.group, []).append(scenario)
    for group in groups.values():
        for choice, fails in _group_choices(group):
            target = failing if fails else out
            if choice not in target:
                target.append(choice)
    return tuple(out or failing[:1]) or (StrategyChoice(None, "unknown strategy", "?"),)


def _group_choices(group: list[configuration.Scenario]) -> list[tuple[StrategyChoice, bool]]:
    """A group's choice (scenarios that differ only in values not known): its strategy when the
    unknown values do not change it, else an unknown choice."""
    choices = [(_choice(s), s.outcome is not None and s.outcome.error is not None) for s in group]
    working = [c for c, fails in choices if not fails]
    kinds = {c.kind for c in working}
    if len(group) > 1 and (len(kinds) > 1 or (working and len(working) < len(choices))):
        assumed = ", ".join(f"`{n}`" for n in group[0].assumed)
        return [(StrategyChoice(None, f"the strategy depends on {assumed}, which is not known statically", "?"), False)]
    return choices


def _choice(s: configuration.Scenario) -> StrategyChoice:
    origin = s.origin("strategy") or s.origin("accelerator") or s.origin("devices")
    if s.outcome is None:
        label = s.label("strategy") or "; ".join(s.unknown)
        return StrategyChoice(None, label, "?", origin if s.label("strategy") else None)
    if s.outcome.error is not None:
        return StrategyChoice(
            None, f"`Fabric(...)` raises {s.outcome.error.type} {s.outcome.host.describe()}", "?", origin
        )
    label = (
        s.label("strategy")
        or ", ".join(x for x in (s.label("accelerator"), s.label("devices")) if x)
        or 'strategy="auto"'
    )
    kind = s.outcome.kind
    name = s.outcome.strategy or "?"
    return StrategyChoice(kind, label, name if kind is not None else "?", origin, _joint_setup_arguments(s, kind))


def _joint_setup_arguments(s: configuration.Scenario, kind: Kind | None) -> tuple[tuple[str, tuple | None], ...]:
    """The constructor arguments that decide joint setup (``StrategyChoice.arguments``): the
    strategy instance's constants, None where not known and for every one of them on a project's
    subclass (it may pass anything to ``super().__init__``)."""
    names = facts.strategy_arguments_of_interest(kind)
    strategy = s.args.strategy if s.args is not None else None
    if not names or not isinstance(strategy, lightning.Obj):
        return ()
    if strategy.base is not None:
        return tuple((name, None) for name in names)
    given = dict(strategy.args)
    return tuple((n, None if given[n] is facts.NOT_KNOWN else (given[n],)) for n in names if n in given)


def lightning_base(ev: Evaluator, cls: ClassRef) -> str | None:
    """The Lightning class (canonical name) a user class derives from, at any depth."""
    for klass in ev.mro(cls):
        for base in klass.node.bases:
            for v in ev.ev(base, Ctx(klass.module)):
                if isinstance(v, QualRef) and (
                    facts.is_fabric_class(v.qualname)
                    or facts.strategy_kind_of_class(v.qualname) is not None
                    or facts.is_xla_accelerator_class(v.qualname)
                ):
                    return facts.canonical(v.qualname)
    return None


def pytorch_base(ev: Evaluator, cls: ClassRef) -> str | None:
    """The Trainer-side Lightning class (``facts.pytorch_class``'s canonical name: the Trainer,
    ``LightningModule``, ``LightningDataModule``, ``Callback`` …) a user class derives from, at
    any depth, or None."""
    for klass in ev.mro(cls):
        for base in klass.node.bases:
            for v in ev.ev(base, Ctx(klass.module)):
                name = facts.pytorch_class(v.qualname) if isinstance(v, QualRef) else None
                if name is not None:
                    return name
    return None


def pytorch_class_of(ev: Evaluator, v: Value) -> str | None:
    """The Trainer-side Lightning class a value names: one of Lightning's by its qualified name,
    or a user class deriving from one."""
    if isinstance(v, QualRef):
        return facts.pytorch_class(v.qualname)
    if isinstance(v, ClassRef):
        return pytorch_base(ev, v)
    return None


def is_fabric_class(ev: Evaluator, v: Value) -> bool:
    if isinstance(v, QualRef):
        return facts.is_fabric_class(v.qualname)
    if isinstance(v, ClassRef):
        base = lightning_base(ev, v)
        return base is not None and facts.is_fabric_class(base)
    return False


def fabric_instances(
    ev: Evaluator,
    call: ast.Call,
    ctx: Ctx,
    origin: Origin,
    cls: ClassRef | None = None,
    base: ArgumentSet | None = None,
) -> list[Value]:
    """The Fabrics ``call`` builds: one per argument set."""
    name = cls.name if cls is not None else "Fabric"
    return [
        FabricInst(fabric_choices(ev, args), origin, name, args=args)
        for args in argument_sets(ev, call, ctx, cls, base)
    ]


def is_trainer_class(ev: Evaluator, v: Value) -> bool:
    """Whether ``v`` is Lightning's ``Trainer`` (any import path) or a project's subclass of it."""
    return pytorch_class_of(ev, v) == facts.TRAINER_CLASS


def trainer_instances(
    ev: Evaluator,
    call: ast.Call,
    ctx: Ctx,
    origin: Origin,
    cls: ClassRef | None = None,
    base: ArgumentSet | None = None,
) -> list[Value]:
    """The Trainers ``call`` builds: one per argument set (a subclass's forwarded to
    ``super().__init__``, a partial's bound keywords under the call's)."""
    name = cls.name if cls is not None else "Trainer"
    return [TrainerInst(origin, name, args) for args in argument_sets(ev, call, ctx, cls, base)]
