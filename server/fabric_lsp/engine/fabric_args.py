"""What a ``Fabric(...)`` call's arguments give: the strategies it can have, from the
``strategy=``, ``accelerator=`` and ``devices=`` arguments (and those a ``Fabric`` subclass passes
to ``super().__init__``)."""

from __future__ import annotations

import ast
from typing import Optional

from fabric_lsp import facts
from fabric_lsp.facts import Kind
from fabric_lsp.engine import calls
from fabric_lsp.engine.modules import FUNC_TYPES
from fabric_lsp.engine.values import AcceleratorInst, ClassRef, Const, Ctx, Evaluator, Origin, QualRef, Seq, StrategyChoice, StrategyInst, Unknown, Value, short


def fabric_choices(ev: Evaluator, call: ast.Call, ctx: Ctx, cls: Optional[ClassRef] = None) -> tuple[StrategyChoice, ...]:
    kwargs = {kw.arg: kw.value for kw in call.keywords if kw.arg}
    unpacked = any(kw.arg is None for kw in call.keywords)
    strategy = kwargs.get("strategy")
    if cls is not None and strategy is None:
        # a subclass may pass strategy= to super().__init__
        forced = subclass_forwarded(ev, cls, call, ctx)
        if forced is not None:
            return forced
    if strategy is None:
        if unpacked:
            return (StrategyChoice(None, "strategy from `**kwargs`", "?"),)
        return auto_choices(ev, kwargs, ctx)
    out: list[StrategyChoice] = []
    for v in ev.ev(strategy, ctx):
        out.extend(choice_of(ev, v, strategy, kwargs, ctx))
    return tuple(out) or (StrategyChoice(None, "unknown strategy", "?"),)


def subclass_forwarded(ev: Evaluator, cls: ClassRef, call: ast.Call, ctx: Ctx):
    for klass in ev.mro(cls):
        for item in klass.node.body:
            if isinstance(item, FUNC_TYPES) and item.name == "__init__":
                env = calls.bind_call(ev, item, call, ctx, skip=1) + ctx.env
                for sup in ast.walk(item):
                    if (
                        isinstance(sup, ast.Call)
                        and isinstance(sup.func, ast.Attribute)
                        and sup.func.attr == "__init__"
                    ):
                        sctx = Ctx(klass.module, env, ctx.depth)
                        kwargs = {kw.arg: kw.value for kw in sup.keywords if kw.arg}
                        if "strategy" in kwargs:
                            out: list[StrategyChoice] = []
                            for v in ev.ev(kwargs["strategy"], sctx):
                                out.extend(choice_of(ev, v, kwargs["strategy"], kwargs, sctx))
                            return tuple(out)
                        if not any(kw.arg is None for kw in sup.keywords):
                            return auto_choices(ev, kwargs, sctx)
                return None
    return None


def choice_of(ev: Evaluator, v: Value, expr: ast.AST, kwargs: dict, ctx: Ctx) -> list[StrategyChoice]:
    if isinstance(v, StrategyInst):
        return [StrategyChoice(v.kind, f"`{v.origin.text}`" if v.origin else v.class_name, v.class_name, v.origin)]
    if isinstance(v, Const) and isinstance(v.value, str):
        text = v.value.strip().lower()
        if text == facts.AUTO_STRATEGY:
            return list(auto_choices(ev, kwargs, ctx, v.origin))
        kind = facts.strategy_kind_of_string(text)
        label = v.note or f'strategy="{v.value}"'
        if kind is None:
            return [StrategyChoice(None, label, "?", v.origin)]
        if kind is Kind.FSDP and text == "fsdp" and tpu_alternatives(ev, kwargs.get("accelerator"), ctx) == [True]:
            kind = Kind.XLA_FSDP
        return [StrategyChoice(kind, label, facts.KIND_CLASS_NAME[kind], v.origin)]
    if isinstance(v, Unknown):
        return [StrategyChoice(None, f"`{short(ctx.module.segment(expr), 40)}` is not known statically", "?")]
    return [StrategyChoice(None, "strategy of unknown kind", "?")]


def tpu_alternatives(ev: Evaluator, expr: Optional[ast.AST], ctx: Ctx) -> list[Optional[bool]]:
    if expr is None:
        return [False]
    out: list[Optional[bool]] = []
    for v in ev.ev(expr, ctx):
        if isinstance(v, Const) and isinstance(v.value, str):
            out.append(v.value == "tpu")  # accelerator names are case-sensitive in Lightning
        elif isinstance(v, AcceleratorInst):
            out.append(v.tpu)
        else:
            out.append(None)
    return out


def auto_choices(ev: Evaluator, kwargs: dict, ctx: Ctx, origin: Optional[Origin] = None) -> tuple[StrategyChoice, ...]:
    accel = kwargs.get("accelerator")
    tpu = tpu_alternatives(ev, accel, ctx)
    out: list[StrategyChoice] = []
    m = ctx.module
    accel_origin = Origin(m.span(accel), short(m.segment(accel)), m.path) if accel is not None else origin
    for is_tpu in tpu:
        if is_tpu is None:
            out.append(StrategyChoice(None, "unknown accelerator", "?"))
        elif not is_tpu:
            out.append(StrategyChoice(Kind.SINGLE_DEVICE, "strategy=\"auto\"", "auto", origin))
        else:
            out.extend(tpu_devices(ev, kwargs.get("devices"), ctx, accel_origin))
    return tuple(out)


def tpu_devices(ev: Evaluator, expr: Optional[ast.AST], ctx: Ctx, accel_origin: Optional[Origin]) -> list[StrategyChoice]:
    many = StrategyChoice(Kind.XLA, 'accelerator="tpu" on several devices', "XLAStrategy", accel_origin)
    if expr is None:
        return [many]
    out = []
    for v in ev.ev(expr, ctx):
        n: Optional[int] = None
        if isinstance(v, Const):
            if isinstance(v.value, str):
                s = v.value.strip()
                if s == "auto":
                    n = 2
                elif s.lstrip("-").isdigit():
                    n = int(s)
                elif "," in s:
                    n = len([x for x in s.split(",") if x.strip()])
            elif isinstance(v.value, int) and not isinstance(v.value, bool):
                n = v.value
        elif isinstance(v, Seq):
            n = v.length
        listed = isinstance(v, Seq) or (isinstance(v, Const) and isinstance(v.value, str) and "," in v.value)
        if n is None:
            out.append(StrategyChoice(None, "unknown number of TPU devices", "?"))
        elif n == 1:
            out.append(StrategyChoice(Kind.SINGLE_XLA, "one TPU device", "SingleDeviceXLAStrategy", accel_origin))
        elif n == 0 or listed:
            # Lightning accepts 1, the chip count or [i]: a longer list raises in Fabric()
            out.append(StrategyChoice(None, "TPU devices Lightning rejects", "?"))
        else:
            out.append(many)
    return out


def lightning_base(ev: Evaluator, cls: ClassRef) -> Optional[str]:
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


def is_fabric_class(ev: Evaluator, v: Value) -> bool:
    if isinstance(v, QualRef):
        return facts.is_fabric_class(v.qualname)
    if isinstance(v, ClassRef):
        base = lightning_base(ev, v)
        return base is not None and facts.is_fabric_class(base)
    return False
