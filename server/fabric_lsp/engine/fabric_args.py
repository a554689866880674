"""What a ``Fabric(...)`` call's arguments are, wherever they are written (:class:`ArgumentSet`),
and the strategies they give, from the ``strategy=``, ``accelerator=`` and ``devices=``
arguments."""

from __future__ import annotations

import ast
from typing import Optional

from fabric_lsp import facts
from fabric_lsp.facts import Kind
from fabric_lsp.engine import calls
from fabric_lsp.engine.modules import FUNC_TYPES
from fabric_lsp.engine.values import AcceleratorInst, Arg, ClassRef, Const, Ctx, DictVal, Evaluator, ArgumentSet, FabricInst, KwargsVal, Origin, QualRef, Seq, StrategyChoice, StrategyInst, Unknown, Value, short


#: at most this many argument sets (``**cfg`` with alternatives, merged dicts) per ``Fabric(...)``
MAX_ARGUMENT_SETS = 8

def keyword_sets(ev: Evaluator, keywords: list[ast.keyword], ctx: Ctx) -> list[ArgumentSet]:
    """The argument sets a list of call keywords gives (``**x`` expanded where it is known)."""
    sets = [ArgumentSet()]
    for kw in keywords:
        if kw.arg is not None:
            part = [ArgumentSet(((kw.arg, kw.value, ctx),))]
        else:
            part = dict_sets(ev, kw.value, ctx)
        sets = [a.merged(b) for a in sets for b in part][:MAX_ARGUMENT_SETS]
    return sets


def dict_sets(ev: Evaluator, expr: ast.AST, ctx: Ctx) -> list[ArgumentSet]:
    """The entries a ``**expr`` may hold: one set per alternative of ``expr``."""
    out: list[ArgumentSet] = []
    for v in ev.ev(expr, ctx):
        if isinstance(v, DictVal):
            out += _display_sets(ev, v.node, v.ctx)
        elif isinstance(v, KwargsVal):
            out += keyword_sets(ev, list(v.node.keywords), v.ctx)
            if v.node.args:  # dict(base, key=...): the positional mapping comes first
                out = [b.merged(a) for b in dict_sets(ev, v.node.args[0], v.ctx) for a in out]
        else:
            out.append(ArgumentSet(open=True))
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
        sets = [a.merged(b) for a in sets for b in part][:MAX_ARGUMENT_SETS]
    return sets


def argument_sets(ev: Evaluator, call: ast.Call, ctx: Ctx, cls: Optional[ClassRef] = None, base: Optional[ArgumentSet] = None) -> list[ArgumentSet]:
    """The argument sets of ``Fabric(...)`` (or of a subclass, or of a partial of either):
    ``base`` holds arguments a ``functools.partial`` already bound."""
    sets = keyword_sets(ev, list(call.keywords), ctx)
    if base is not None:
        sets = [base.merged(s) for s in sets]
    if cls is not None:
        forwarded = subclass_forwarded(ev, cls, call, ctx)
        if forwarded is not None:
            return forwarded
    return sets


def subclass_forwarded(ev: Evaluator, cls: ClassRef, call: ast.Call, ctx: Ctx) -> Optional[list[ArgumentSet]]:
    """The arguments a ``Fabric`` subclass's ``__init__`` passes to ``super().__init__``."""
    for klass in ev.mro(cls):
        for item in klass.node.body:
            if isinstance(item, FUNC_TYPES) and item.name == "__init__":
                env = calls.bind_call(ev, item, call, ctx, skip=1) + ctx.env
                for sup in ast.walk(item):
                    if isinstance(sup, ast.Call) and isinstance(sup.func, ast.Attribute) and sup.func.attr == "__init__":
                        return keyword_sets(ev, list(sup.keywords), Ctx(klass.module, env, ctx.depth))
                return None
    return None


def fabric_choices(ev: Evaluator, args: ArgumentSet) -> tuple[StrategyChoice, ...]:
    strategy = args.get("strategy")
    if strategy is None:
        if args.open:
            return (StrategyChoice(None, "strategy from `**kwargs`", "?"),)
        return auto_choices(ev, args)
    expr, ctx = strategy
    out: list[StrategyChoice] = []
    for v in ev.ev(expr, ctx):
        out.extend(choice_of(ev, v, expr, args, ctx))
    return tuple(out) or (StrategyChoice(None, "unknown strategy", "?"),)


def choice_of(ev: Evaluator, v: Value, expr: ast.AST, args: ArgumentSet, ctx: Ctx) -> list[StrategyChoice]:
    if isinstance(v, StrategyInst):
        return [StrategyChoice(v.kind, f"`{v.origin.text}`" if v.origin else v.class_name, v.class_name, v.origin)]
    if isinstance(v, Const) and isinstance(v.value, str):
        text = v.value.strip().lower()
        if text == facts.AUTO_STRATEGY:
            return list(auto_choices(ev, args, v.origin))
        kind = facts.strategy_kind_of_string(text)
        label = v.note or f'strategy="{v.value}"'
        if kind is None:
            return [StrategyChoice(None, label, "?", v.origin)]
        if kind is Kind.FSDP and text == "fsdp" and tpu_alternatives(ev, args.get("accelerator")) == [True]:
            kind = Kind.XLA_FSDP
        return [StrategyChoice(kind, label, facts.KIND_CLASS_NAME[kind], v.origin)]
    if isinstance(v, Unknown):
        return [StrategyChoice(None, f"`{short(ctx.module.segment(expr), 40)}` is not known statically", "?")]
    return [StrategyChoice(None, "strategy of unknown kind", "?")]


def tpu_alternatives(ev: Evaluator, arg: Optional[Arg]) -> list[Optional[bool]]:
    if arg is None:
        return [False]
    out: list[Optional[bool]] = []
    for v in ev.ev(*arg):
        if isinstance(v, Const) and isinstance(v.value, str):
            out.append(v.value == "tpu")  # accelerator names are case-sensitive in Lightning
        elif isinstance(v, AcceleratorInst):
            out.append(v.tpu)
        else:
            out.append(None)
    return out


def auto_choices(ev: Evaluator, args: ArgumentSet, origin: Optional[Origin] = None) -> tuple[StrategyChoice, ...]:
    accel = args.get("accelerator")
    if accel is None and args.open:
        return (StrategyChoice(None, "accelerator from `**kwargs`", "?"),)
    tpu = tpu_alternatives(ev, accel)
    out: list[StrategyChoice] = []
    accel_origin = origin
    if accel is not None:
        m = accel[1].module
        accel_origin = Origin(m.span(accel[0]), short(m.segment(accel[0])), m.path)
    for is_tpu in tpu:
        if is_tpu is None:
            out.append(StrategyChoice(None, "unknown accelerator", "?"))
        elif not is_tpu:
            out.append(StrategyChoice(Kind.SINGLE_DEVICE, "strategy=\"auto\"", "auto", origin))
        else:
            out.extend(tpu_devices(ev, args.get("devices"), accel_origin))
    return tuple(out)


def tpu_devices(ev: Evaluator, arg: Optional[Arg], accel_origin: Optional[Origin]) -> list[StrategyChoice]:
    many = StrategyChoice(Kind.XLA, 'accelerator="tpu" on several devices', "XLAStrategy", accel_origin)
    if arg is None:
        return [many]
    out = []
    for v in ev.ev(*arg):
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


def fabric_instances(ev: Evaluator, call: ast.Call, ctx: Ctx, origin: Origin, cls: Optional[ClassRef] = None, base: Optional[ArgumentSet] = None) -> list[Value]:
    """The Fabrics ``call`` builds: one per argument set."""
    name = cls.name if cls is not None else "Fabric"
    return [FabricInst(fabric_choices(ev, args), origin, name, args=args) for args in argument_sets(ev, call, ctx, cls, base)]
