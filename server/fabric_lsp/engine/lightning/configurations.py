"""From a ``Fabric(...)`` (or a ``Trainer(...)``) the evaluator followed to what Lightning makes of it: the bridge between
abstract argument values (:class:`~fabric_lsp.engine.python.values.ArgumentSet`) and the Lightning adapter
(:mod:`fabric_lsp.engine.lightning.connector`), which needs plain values.

Each *scenario* is one combination of argument values the code can give, resolved by the adapter
on one kind of machine. Static analysis does not know the machine: an explicit accelerator names
it (``"cuda"``/``"gpu"`` → a CUDA machine with 8 devices, ``"tpu"`` → 8 TPU chips, ``"cpu"``,
``"mps"``); ``"auto"`` (or none) counts as both a CPU machine and a CUDA machine with 8 devices
(never a TPU machine: code written without a TPU in mind is not judged as if it ran on one).
Code that runs in a notebook (``interactive``) is resolved on the same machines in a notebook/REPL.
An argument whose value is not known makes an *unknown* scenario, which rules treat as "may be
anything": never an error, at most a warning or a hint. A ``Trainer(...)``'s scenarios are made
the same way and resolved by the Trainer's connector (:mod:`fabric_lsp.engine.lightning.trainer`).
"""

from __future__ import annotations

import ast
import dataclasses
import itertools
from dataclasses import dataclass
from typing import Any, Callable

from fabric_lsp import facts
from fabric_lsp.engine.lightning import connector as lightning
from fabric_lsp.engine.lightning import trainer as trainer_connector
from fabric_lsp.engine.python import conditions, paths
from fabric_lsp.engine.python.values import (
    AcceleratorInst,
    ArgumentSet,
    Const,
    Ctx,
    Evaluator,
    FabricInst,
    Origin,
    QualRef,
    Seq,
    StrategyInst,
    TrainerInst,
    Unknown,
    Value,
    short,
)

#: Values tried for an argument whose value is not known (the strategy has none: an unknown
#: strategy makes the scenario unknown). A scenario built from such a value is *assumed* in that
#: argument: a rule may use it only when its answer does not depend on the assumption.
REPRESENTATIVES: dict[str, tuple[Any, ...]] = {
    "accelerator": ("auto",),
    "devices": (1, 2),
    "num_nodes": (1,),
    "precision": (None,),
    "plugins": (None,),
}
#: at most this many scenarios per Fabric
MAX_SCENARIOS = 48
#: at most this many feasible combinations (the same values on several paths included) are
#: looked at per Fabric
MAX_COMBINATIONS = 1024
#: the arguments the connector reads, with Fabric's defaults
CONNECTOR_ARGS = ("accelerator", "strategy", "devices", "num_nodes", "precision", "plugins")

CPU = lightning.CPU
CUDA = lightning.Host(cuda=8)
ONE_GPU = lightning.Host(cuda=1)
TPU = lightning.Host(tpu=8)
MPS = lightning.Host(mps=True)
_HOSTS_BY_ACCELERATOR = {
    "cpu": (CPU,),
    "cuda": (CUDA,),
    "gpu": (CUDA,),
    "tpu": (TPU,),
    "mps": (MPS,),
    "auto": (CPU, CUDA),
}


@dataclass(frozen=True)
class Scenario:
    """One configuration of a Fabric on one kind of machine. ``outcome`` is None when some
    argument is not known (``unknown`` says which and why)."""

    args: lightning.FabricArgs | None  # the arguments as the code gives them (a Trainer's too: the same names)
    outcome: lightning.Outcome | None
    #: argument name → where the value of this scenario was written
    origins: tuple[tuple[str, Origin], ...] = ()
    unknown: tuple[str, ...] = ()
    #: argument name → how the value reads in a message (`strategy="deepspeed"`, a CLI choice …)
    labels: tuple[tuple[str, str], ...] = ()
    #: arguments whose value is not known, taken from :data:`REPRESENTATIVES`
    assumed: tuple[str, ...] = ()

    @property
    def group(self) -> tuple:
        """Scenarios that differ only in assumed values share a group: a rule whose answer is
        the same across a group does not depend on what is not known."""
        if self.args is None or self.outcome is None:
            return (id(self),)
        known = tuple((n, repr(getattr(self.args, n))) for n in CONNECTOR_ARGS if n not in self.assumed)
        return known + (self.outcome.host, self.assumed)

    def label(self, name: str) -> str | None:
        return dict(self.labels).get(name)

    @property
    def known(self) -> bool:
        return self.outcome is not None

    def origin(self, name: str) -> Origin | None:
        return dict(self.origins).get(name)

    def describe(self) -> str:
        """``strategy="deepspeed", devices=4 on CUDA with 8 devices``: the written values."""
        if self.args is None or self.outcome is None:
            return "; ".join(self.unknown)
        written = [f"{name}={_show(getattr(self.args, name))}" for name, _ in self.origins]
        return (", ".join(written) or "Fabric's defaults") + " " + self.outcome.host.describe()


def is_deepspeed(s: Scenario) -> bool:
    """The scenario's strategy is DeepSpeed (a subclass included)."""
    return s.outcome is not None and s.outcome.strategy_base == "DeepSpeedStrategy"


def _show(value: Any) -> str:
    return repr(value) if not isinstance(value, lightning.Obj) else f"{value.cls}(...)"


def scenarios(ev: Evaluator, fabric: FabricInst, interactive: bool = False) -> list[Scenario]:
    """What ``fabric`` can be: one scenario per combination of argument values and machine
    (``interactive``: the machines run the code in a notebook or REPL)."""
    if fabric.args is None:
        return [Scenario(None, None, unknown=("a Fabric known only by its type",))]
    return scenarios_of(ev, fabric.args, interactive)


def trainer_scenarios(ev: Evaluator, trainer: TrainerInst, interactive: bool = False) -> list[Scenario]:
    """What ``trainer`` can be, as :func:`scenarios` for a Fabric, resolved by the Trainer's
    connector (its ``outcome`` a :class:`~fabric_lsp.engine.lightning.trainer.TrainerOutcome`)."""
    if trainer.args is None:
        return [Scenario(None, None, unknown=("a Trainer known only by its type",))]
    return scenarios_of(ev, trainer.args, interactive, _resolve_trainer, for_trainer=True)


def _resolve_fabric(values: dict[str, Any], host: lightning.Host) -> lightning.Outcome:
    return lightning.resolve(lightning.FabricArgs(**values), host)


def _resolve_trainer(values: dict[str, Any], host: lightning.Host) -> lightning.Outcome:
    return trainer_connector.resolve(trainer_connector.TrainerArgs(**values), host)


#: one combination of values on one machine → what the connector makes of it
Resolver = Callable[[dict[str, Any], lightning.Host], lightning.Outcome]


def scenarios_of(
    ev: Evaluator,
    args: ArgumentSet,
    interactive: bool = False,
    resolve: Resolver = _resolve_fabric,
    for_trainer: bool = False,
) -> list[Scenario]:
    """One scenario per *feasible* combination of argument values (their paths agree: values
    the code chooses together go together) and machine (``for_trainer``: the arguments of a
    ``Trainer(...)``, whose strategy objects are the Trainer's classes). Worked out once per
    analysis and argument set: the strategies of a Fabric are asked where it is built, its
    scenarios again by every rule that judges a call on it."""
    if ev.asked_once is None:
        return _scenarios_of(ev, args, interactive, resolve, for_trainer)
    key = ("scenarios_of", args, interactive, resolve, for_trainer)
    return list(ev.asked_once(key, lambda: _scenarios_of(ev, args, interactive, resolve, for_trainer)))


def _scenarios_of(
    ev: Evaluator, args: ArgumentSet, interactive: bool, resolve: Resolver, for_trainer: bool
) -> list[Scenario]:
    per_arg = [_alternatives(ev, args, name, for_trainer) for name in CONNECTOR_ARGS]
    out: list[Scenario] = []
    seen: set = set()
    for combo in itertools.islice(_feasible(per_arg, args.path), MAX_COMBINATIONS):
        # combinations of the same values on different paths are one configuration
        values = tuple(
            (c.value if not isinstance(c.value, (list, dict)) else repr(c.value), c.unknown, c.assumed) for c in combo
        )
        if _seen(values, seen):
            continue
        out += _resolved(combo, interactive, resolve)
        if len(out) >= MAX_SCENARIOS:
            break
    return out[:MAX_SCENARIOS]


def _seen(values: tuple, seen: set) -> bool:
    try:
        if values in seen:
            return True
        seen.add(values)
    except TypeError:  # a value that cannot be hashed: kept
        pass
    return False


def _feasible(per_arg: list[list[_Choice]], path: frozenset):
    """The combinations of one choice per argument whose paths agree (depth first, pruning a
    prefix as soon as it disagrees), and whose assumed values go the way the path's tests of
    them went."""
    for combo, merged in _agreeing(per_arg, path):
        if all(c.source is None or conditions.agrees(c.source, c.value, merged) for c in combo):
            yield combo


def _agreeing(per_arg: list[list[_Choice]], path: frozenset):
    if not per_arg:
        yield (), path
        return
    first, rest = per_arg[0], per_arg[1:]
    for choice in first:
        merged = paths.merge(path, choice.path)
        if merged is None:
            continue
        for tail, full in _agreeing(rest, merged):
            yield (choice, *tail), full


@dataclass(frozen=True)
class _Choice:
    name: str
    value: Any = None
    origin: Origin | None = None
    unknown: str | None = None  # why the value is not known
    written: bool = False  # False: Fabric's default
    label: str | None = None
    assumed: bool = False  # a representative value for one not known
    path: frozenset = paths.EMPTY  # the decisions the value was chosen under
    #: for an assumed value: the value not known it stands for (its reason and path)
    source: tuple[str, frozenset] | None = None


_DEFAULTS = {
    "accelerator": "auto",
    "strategy": "auto",
    "devices": "auto",
    "num_nodes": 1,
    "precision": None,
    "plugins": None,
}


def _alternatives(ev: Evaluator, args: ArgumentSet, name: str, for_trainer: bool = False) -> list[_Choice]:
    arg = args.get(name)
    if arg is None:
        if args.open:
            return _unknown(name, None, f"`{name}` may come from `**kwargs`", None)
        return [_Choice(name, _DEFAULTS[name])]
    expr, ctx = arg
    out = []
    for v in ev.reached(ev.ev(expr, ctx), ctx.module.stmt_of(expr), ctx):
        value, why = concrete(ev, v, for_trainer)
        origin = getattr(v, "origin", None) or Origin(
            ctx.module.span(expr), short(ctx.module.segment(expr)), ctx.module.path
        )
        path = paths.path_of(v)
        if why is None:
            out.append(_Choice(name, value, origin, written=True, label=_label(name, v, value, origin), path=path))
        else:
            label = f"`{short(ctx.module.segment(expr), 40)}` is not known statically"
            source = (v.reason, path) if isinstance(v, Unknown) and path else None
            out += _unknown(name, origin, f"`{name}`: {why}", label, path, source)
    return _distinct(out) or _unknown(name, None, f"`{name}` is not known statically", None)


def _unknown(
    name: str,
    origin: Origin | None,
    why: str,
    label: str | None,
    path: frozenset = paths.EMPTY,
    source: tuple | None = None,
) -> list[_Choice]:
    reps = REPRESENTATIVES.get(name)
    if reps is None:
        return [_Choice(name, origin=origin, unknown=why, written=True, label=label, path=path)]
    return [
        _Choice(name, rep, origin, written=True, label=label, assumed=True, path=path, source=source) for rep in reps
    ]


def _distinct(choices: list[_Choice]) -> list[_Choice]:
    out: list[_Choice] = []
    for c in choices:
        if c not in out:
            out.append(c)
    return out


def _label(name: str, v: Value, value: Any, origin: Origin | None) -> str:
    if isinstance(v, Const) and v.note:
        return v.note
    if isinstance(value, (str, int, float, bool)) or value is None:
        return f"{name}={value!r}".replace("'", '"')
    return f"`{origin.text}`" if origin is not None else f"{name}=..."


def concrete(ev: Evaluator, v: Value, for_trainer: bool = False) -> tuple[Any, str | None]:
    """The plain value the adapter takes for ``v`` (value, None), or (None, why not); a strategy
    object of the other side (a Trainer's strategy given to a Fabric, or Fabric's to a Trainer) is
    not known."""
    if isinstance(v, Const):
        return v.value, None
    if isinstance(v, Seq):
        items = []
        for item in v.items:
            values = ev.ev(item, v.ctx) if v.ctx is not None else []
            if len(values) != 1 or not isinstance(values[0], Const):
                return None, "a list with items not known statically"
            items.append(values[0].value)
        return items, None
    if isinstance(v, StrategyInst) and v.trainer != for_trainer:
        return None, f"`{v.class_name}` is a strategy of the {'Trainer' if v.trainer else 'Fabric'}'s"
    if isinstance(v, StrategyInst):
        known, unknown = _constructor_args(ev, v)
        return lightning.Obj(
            v.class_name, known, base=v.base if v.base != v.class_name else None, unknown=unknown
        ), None
    if isinstance(v, AcceleratorInst) and v.class_name:
        return lightning.Obj(v.class_name, base=v.base if v.base != v.class_name else None), None
    if isinstance(v, Unknown):
        return None, v.reason or "not known statically"
    return None, "not a value fabric-lsp can follow"


def _constructor_args(ev: Evaluator, v: StrategyInst) -> tuple[tuple[tuple[str, Any], ...], tuple[str, ...]]:
    """The keyword arguments of a strategy's constructor whose values are plain constants (the
    decisive ones for joint setup as ``facts.NOT_KNOWN`` when they are not), and the names of
    those that are not known (``"*"`` for positional arguments after the first and ``**``)."""
    if v.call is None or v.ctx is None:
        return (), ()
    out = []
    unknown = ["*"] if len(v.call.args) > 1 else []
    decisive = facts.strategy_arguments_of_interest(v.kind)  # joint setup depends on them (FAB001)
    for kw in v.call.keywords:
        if kw.arg is None:
            out += [(name, facts.NOT_KNOWN) for name in decisive]
            unknown.append("*")
            continue
        values = ev.ev(kw.value, v.ctx)
        if len(values) == 1 and isinstance(values[0], Const):
            out.append((kw.arg, values[0].value))
            continue
        member = _enum_member(values)
        if member is not None:
            out.append((kw.arg, member))
            continue
        unknown.append(kw.arg)
        if kw.arg in decisive:
            out.append((kw.arg, facts.NOT_KNOWN))
    return tuple(out), tuple(dict.fromkeys(unknown))


def _enum_member(values: list[Value]) -> str | None:
    """``ShardingStrategy.NO_SHARD`` (a member of an enum a strategy takes in place of its name)."""
    if len(values) != 1 or not isinstance(values[0], QualRef):
        return None
    parts = values[0].qualname.rsplit(".", 2)
    return ".".join(parts[-2:]) if len(parts) == 3 and parts[1] == facts.FSDP_SHARDING_ENUM else None


def _resolved(combo: tuple[_Choice, ...], interactive: bool, resolve: Resolver) -> list[Scenario]:
    origins = tuple((c.name, c.origin) for c in combo if c.written and c.origin is not None)
    unknown = tuple(c.unknown for c in combo if c.unknown)
    if unknown:
        return [
            Scenario(
                None,
                None,
                origins,
                unknown,
                tuple((c.name, c.label) for c in combo if c.label),
                tuple(c.name for c in combo if c.assumed),
            )
        ]
    values = {c.name: c.value for c in combo}
    labels = tuple((c.name, c.label) for c in combo if c.label)
    assumed = tuple(c.name for c in combo if c.assumed)
    hosts = _sized(_hosts(values["accelerator"], values["strategy"]), values["devices"])
    if interactive:
        hosts = tuple(dataclasses.replace(h, interactive=True) for h in hosts)
    args = lightning.FabricArgs(**values)
    return [Scenario(args, resolve(values, host), origins, labels=labels, assumed=assumed) for host in hosts]


def _hosts(accelerator: Any, strategy: Any) -> tuple[lightning.Host, ...]:
    """The machines a configuration means: the accelerator's, else a TPU for an XLA strategy,
    else a CPU machine and a CUDA machine."""
    if isinstance(accelerator, lightning.Obj):
        name = (accelerator.base or accelerator.cls).replace("Accelerator", "").lower()
        return _HOSTS_BY_ACCELERATOR.get("tpu" if name in ("xla", "tpu") else name, (CPU, CUDA))
    if isinstance(accelerator, str) and accelerator.lower() != "auto":
        return _HOSTS_BY_ACCELERATOR.get(accelerator.lower(), (CPU, CUDA))
    if isinstance(strategy, lightning.Obj):
        if (strategy.base or strategy.cls) in facts.XLA_STRATEGY_CLASSES:
            return (TPU,)
    elif facts.names_tpu_strategy(strategy):
        return (TPU,)
    return (CPU, CUDA)


def _wanted(devices: Any) -> int:
    """How many devices (or the highest index + 1) ``devices`` asks for; 0 when it does not say."""
    if isinstance(devices, bool):
        return 0
    if isinstance(devices, int):
        return devices
    if isinstance(devices, str):
        text = devices.strip()
        if text.lstrip("-").isdigit():
            return int(text)
        parts = [p.strip() for p in text.split(",") if p.strip()]
        return max((int(p) + 1 for p in parts if p.isdigit()), default=0) if "," in text else 0
    if isinstance(devices, (list, tuple)) and all(isinstance(d, int) and not isinstance(d, bool) for d in devices):
        return max((d + 1 for d in devices), default=0)
    return 0


def _counts_all(devices: Any) -> bool:
    """``devices="auto"``/``-1``: as many as the machine has, which the code does not say."""
    return devices == "auto" or (not isinstance(devices, bool) and devices in (-1, "-1"))


def _sized(hosts: tuple[lightning.Host, ...], devices: Any) -> tuple[lightning.Host, ...]:
    """The machines sized for what the code asks: a machine with as many chips as ``devices``
    requests (a TPU host has 4 or 8 chips; a CUDA machine at least 8 devices). How many GPUs a
    machine has is not in the code: where ``devices`` takes them all, a CUDA machine with one GPU
    is as likely as one with eight."""
    n = _wanted(devices)
    if n <= 1:
        if _counts_all(devices) and any(h.cuda for h in hosts):
            return tuple(dict.fromkeys(x for h in hosts for x in ((ONE_GPU, h) if h.cuda else (h,))))
        return hosts
    out = []
    for h in hosts:
        if h.tpu:
            h = lightning.Host(tpu=n)
        elif h.cuda and n > h.cuda:
            h = lightning.Host(cuda=n)
        out.append(h)
    return tuple(out)


def argument_node(args: ArgumentSet, name: str) -> tuple[ast.AST, Ctx] | None:
    """Where ``name`` is written for a Fabric (for diagnostics on an argument's value)."""
    return args.get(name)
