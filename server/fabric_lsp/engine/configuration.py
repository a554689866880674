"""From a ``Fabric(...)`` the evaluator followed to what Lightning makes of it: the bridge between
abstract argument values (:class:`~fabric_lsp.engine.values.ArgumentSet`) and the Lightning adapter
(:mod:`fabric_lsp.engine.lightning`), which needs plain values.

Each *scenario* is one combination of argument values the code can give, resolved by the adapter
on one kind of machine. Static analysis does not know the machine: an explicit accelerator names
it (``"cuda"``/``"gpu"`` → a CUDA machine with 8 devices, ``"tpu"`` → 8 TPU chips, ``"cpu"``,
``"mps"``); ``"auto"`` (or none) counts as both a CPU machine and a CUDA machine with 8 devices
(never a TPU machine: code written without a TPU in mind is not judged as if it ran on one).
An argument whose value is not known makes an *unknown* scenario, which rules treat as "may be
anything": never an error, at most a warning or a hint.
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass
from typing import Any, Optional

from fabric_lsp.engine import lightning
from fabric_lsp.engine.values import (
    AcceleratorInst,
    ArgumentSet,
    Const,
    Ctx,
    Evaluator,
    FabricInst,
    Origin,
    Seq,
    StrategyInst,
    Unknown,
    Value,
    short,
)

#: at most this many scenarios per Fabric
MAX_SCENARIOS = 48
#: the arguments the connector reads, with Fabric's defaults
CONNECTOR_ARGS = ("accelerator", "strategy", "devices", "num_nodes", "precision", "plugins")

CPU = lightning.CPU
CUDA = lightning.Host(cuda=8)
TPU = lightning.Host(tpu=8)
MPS = lightning.Host(mps=True)
_HOSTS_BY_ACCELERATOR = {"cpu": (CPU,), "cuda": (CUDA,), "gpu": (CUDA,), "tpu": (TPU,), "mps": (MPS,), "auto": (CPU, CUDA)}


@dataclass(frozen=True)
class Scenario:
    """One configuration of a Fabric on one kind of machine. ``outcome`` is None when some
    argument is not known (``unknown`` says which and why)."""

    args: Optional[lightning.FabricArgs]
    outcome: Optional[lightning.Outcome]
    #: argument name → where the value of this scenario was written
    origins: tuple[tuple[str, Origin], ...] = ()
    unknown: tuple[str, ...] = ()

    @property
    def known(self) -> bool:
        return self.outcome is not None

    def origin(self, name: str) -> Optional[Origin]:
        return dict(self.origins).get(name)

    def describe(self) -> str:
        """``strategy="deepspeed", devices=4 on CUDA with 8 devices``: the written values."""
        if self.args is None or self.outcome is None:
            return "; ".join(self.unknown)
        written = [f"{name}={_show(getattr(self.args, name))}" for name, _ in self.origins]
        return (", ".join(written) or "Fabric's defaults") + " " + self.outcome.host.describe()


def _show(value: Any) -> str:
    return repr(value) if not isinstance(value, lightning.Obj) else f"{value.cls}(...)"


def scenarios(ev: Evaluator, fabric: FabricInst) -> list[Scenario]:
    """What ``fabric`` can be: one scenario per combination of argument values and machine."""
    if fabric.args is None:
        return [Scenario(None, None, unknown=("a Fabric known only by its type",))]
    per_arg = [_alternatives(ev, fabric.args, name) for name in CONNECTOR_ARGS]
    out: list[Scenario] = []
    for combo in itertools.islice(itertools.product(*per_arg), MAX_SCENARIOS):
        out += _resolved(combo)
        if len(out) >= MAX_SCENARIOS:
            break
    return out[:MAX_SCENARIOS]


@dataclass(frozen=True)
class _Choice:
    name: str
    value: Any = None
    origin: Optional[Origin] = None
    unknown: Optional[str] = None  # why the value is not known
    written: bool = False  # False: Fabric's default


_DEFAULTS = {"accelerator": "auto", "strategy": "auto", "devices": "auto", "num_nodes": 1, "precision": None, "plugins": None}


def _alternatives(ev: Evaluator, args: ArgumentSet, name: str) -> list[_Choice]:
    arg = args.get(name)
    if arg is None:
        if args.open:
            return [_Choice(name, unknown=f"`{name}` may come from `**kwargs`")]
        return [_Choice(name, _DEFAULTS[name])]
    expr, ctx = arg
    out = []
    for v in ev.ev(expr, ctx):
        value, why = concrete(ev, v)
        origin = getattr(v, "origin", None) or Origin(ctx.module.span(expr), short(ctx.module.segment(expr)), ctx.module.path)
        if why is None:
            out.append(_Choice(name, value, origin, written=True))
        else:
            out.append(_Choice(name, origin=origin, unknown=f"`{name}`: {why}", written=True))
    return out or [_Choice(name, unknown=f"`{name}` is not known statically")]


def concrete(ev: Evaluator, v: Value) -> tuple[Any, Optional[str]]:
    """The plain value the adapter takes for ``v`` (value, None), or (None, why not)."""
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
    if isinstance(v, StrategyInst):
        return lightning.Obj(v.class_name, _constructor_args(ev, v), base=v.base if v.base != v.class_name else None), None
    if isinstance(v, AcceleratorInst) and v.class_name:
        return lightning.Obj(v.class_name, base=v.base if v.base != v.class_name else None), None
    if isinstance(v, Unknown):
        return None, v.reason or "not known statically"
    return None, "not a value fabric-lsp can follow"


def _constructor_args(ev: Evaluator, v: StrategyInst) -> tuple[tuple[str, Any], ...]:
    """The keyword arguments of a strategy's constructor whose values are plain constants."""
    if v.call is None or v.ctx is None:
        return ()
    out = []
    for kw in v.call.keywords:
        if kw.arg is None:
            continue
        values = ev.ev(kw.value, v.ctx)
        if len(values) == 1 and isinstance(values[0], Const):
            out.append((kw.arg, values[0].value))
    return tuple(out)


def _resolved(combo: tuple[_Choice, ...]) -> list[Scenario]:
    origins = tuple((c.name, c.origin) for c in combo if c.written and c.origin is not None)
    unknown = tuple(c.unknown for c in combo if c.unknown)
    if unknown:
        return [Scenario(None, None, origins, unknown)]
    values = {c.name: c.value for c in combo}
    args = lightning.FabricArgs(**values)
    return [Scenario(args, lightning.resolve(args, host), origins) for host in _hosts(values["accelerator"])]


def _hosts(accelerator: Any) -> tuple[lightning.Host, ...]:
    if isinstance(accelerator, lightning.Obj):
        name = (accelerator.base or accelerator.cls).replace("Accelerator", "").lower()
        return _HOSTS_BY_ACCELERATOR.get("tpu" if name in ("xla", "tpu") else name, (CPU, CUDA))
    if isinstance(accelerator, str):
        return _HOSTS_BY_ACCELERATOR.get(accelerator.lower(), (CPU, CUDA))
    return (CPU, CUDA)


def argument_node(args: ArgumentSet, name: str) -> Optional[tuple[ast.AST, Ctx]]:
    """Where ``name`` is written for a Fabric (for diagnostics on an argument's value)."""
    return args.get(name)
