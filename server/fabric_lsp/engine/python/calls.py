"""Call sites: who calls a function, with which arguments — in its own module and in the other
modules of the workspace. ``x.launch(fn, *args)`` counts as ``fn(x, *args)``; so do
``launch(function=fn)`` and ``launch(functools.partial(fn, ...))``; ``fabric.call("hook", *args)``
counts as a call of every callback method named ``hook``."""

from __future__ import annotations

import ast
import os

from fabric_lsp.engine.python.modules import ModuleInfo, callee_name
from fabric_lsp.engine.python.values import ClassRef, Ctx, Evaluator, FabricInst, FuncRef, Seq, Value

#: a function that more modules than this may call (they mention it and its module) is an API
#: whose parameters' values are not followed to its callers: they are filled by callers not in view
MAX_CALLER_MODULES = 12


def call_sites(ev: Evaluator, func: ast.AST, m: ModuleInfo, is_method: bool, cls: ast.ClassDef | None):
    """Yield ({param name: argument expression | None when unpacked}, ctx, call) for each
    call of ``func``: in its own module, then in the other modules of the workspace that
    mention its name (none where more than :data:`MAX_CALLER_MODULES` may call it: see
    :func:`all_followed`). ``x.launch(func, *args)`` counts as ``func(x, *args)``; so do
    ``launch(function=func)`` and ``launch(functools.partial(func, ...))``."""
    if isinstance(func, ast.Lambda):
        return
    yield from sites_in(ev, func, m, is_method, cls, m, verify=False)
    if ev.workspace is None:
        return
    others = ev.workspace.modules_mentioning_at_most(
        MAX_CALLER_MODULES, _called_name(func, is_method, cls), m.path, m.path
    )
    for other in others or []:
        yield from sites_in(ev, func, m, is_method, cls, other, verify=True)


def all_followed(ev: Evaluator, func: ast.AST, m: ModuleInfo, is_method: bool, cls: ast.ClassDef | None) -> bool:
    """Whether :func:`call_sites` follows every module that may call ``func`` (at most
    :data:`MAX_CALLER_MODULES` of them)."""
    return isinstance(func, ast.Lambda) or all_users_followed(ev, _called_name(func, is_method, cls), m)


def all_users_followed(ev: Evaluator, name: str, m: ModuleInfo) -> bool:
    """Whether at most :data:`MAX_CALLER_MODULES` other modules may use the function or class
    ``name`` of module ``m`` (they mention it and ``m``), which are then followed."""
    return ev.workspace is None or ev.workspace.count_mentioning(name, m.path, m.path) <= MAX_CALLER_MODULES


def _called_name(func: ast.AST, is_method: bool, cls: ast.ClassDef | None) -> str:
    return cls.name if (is_method and cls is not None and func.name == "__init__") else func.name


def is_def(ev: Evaluator, v: Value, node: ast.AST, m: ModuleInfo) -> bool:
    """Whether ``v`` is the function or class ``node`` of module ``m`` (modules are parsed
    separately, so definitions are matched by file and position)."""
    if not isinstance(v, (FuncRef, ClassRef)):
        return False
    if v.node is node:
        return True
    same_file = v.module.path and m.path and os.path.abspath(v.module.path) == os.path.abspath(m.path)
    return bool(same_file) and (v.node.lineno, v.node.col_offset) == (node.lineno, node.col_offset)


def bind_args(params: list[str], kwonly: list[str], args: list, keywords: list):
    mapping: dict = {}
    if any(isinstance(a, ast.Starred) for a in args):
        return {p: None for p in params}
    for p, a in zip(params, args):
        mapping[p] = a
    for kw in keywords:
        if kw.arg is None:
            for p in params + kwonly:
                mapping.setdefault(p, None)
        elif kw.arg in params or kw.arg in kwonly:
            mapping[kw.arg] = kw.value
    return mapping


def sites_in(ev: Evaluator, func, m: ModuleInfo, is_method: bool, cls, where: ModuleInfo, verify: bool):
    params = [p.arg for p in (*func.args.posonlyargs, *func.args.args)]
    kwonly = [p.arg for p in func.args.kwonlyargs]
    ctx = Ctx(where)
    if is_method and cls is not None and func.name == "__init__":
        candidates, target = where.calls_by_name.get(cls.name, []), cls
    elif is_method:
        candidates = [c for c in where.calls_by_name.get(func.name, []) if isinstance(c.func, ast.Attribute)]
        target = func
    elif cls is not None:  # a staticmethod: called through its class or an instance, each call verified
        candidates = [c for c in where.calls_by_name.get(func.name, []) if isinstance(c.func, ast.Attribute)]
        target, verify = func, True
    else:
        candidates = [c for c in where.calls_by_name.get(func.name, []) if isinstance(c.func, ast.Name)]
        target = func
    offset = 1 if is_method else 0
    for call in candidates:
        if verify and not any(is_def(ev, v, target, m) for v in ev.ev(call.func, ctx)):
            continue
        yield bind_args(params[offset:], kwonly, _expanded(ev, call, ctx), call.keywords), ctx, call
    if is_method:
        yield from _hook_sites(ev, func, params[offset:], kwonly, where, ctx)
    for call, first, pre_args, pre_kwargs in _launches(where, func.name):
        rest = list(call.args[1:])
        skip = 0
        if verify or isinstance(first, ast.Attribute):
            matches = [v for v in ev.ev(first, ctx) if is_def(ev, v, func, m)]
            if not matches:
                continue
            skip = 1 if isinstance(matches[0], FuncRef) and matches[0].bound_self is not None else 0
        elif is_method:
            continue
        receivers = ev.ev(call.func.value, ctx)
        if not any(isinstance(r, FabricInst) for r in receivers):
            continue
        mapping = bind_args(params[skip:], kwonly, [*pre_args, call.func.value, *rest], [*pre_kwargs, *call.keywords])
        yield mapping, ctx, call


def _hook_sites(ev: Evaluator, func, params: list[str], kwonly: list[str], where: ModuleInfo, ctx: Ctx):
    """``fabric.call("hook", *args, **kwargs)`` runs the method ``hook`` of the Fabric's callbacks
    with those arguments (keywords the method does not take are left out, as Fabric does)."""
    for call in where.calls_in_statements_mentioning("call", func.name):
        if not (isinstance(call.func, ast.Attribute) and call.func.attr == "call" and call.args):
            continue
        hook = call.args[0]
        if not (isinstance(hook, ast.Constant) and hook.value == func.name):
            continue
        if not any(isinstance(r, FabricInst) for r in ev.ev(call.func.value, ctx)):
            continue
        yield bind_args(params, kwonly, list(call.args[1:]), call.keywords), ctx, call


def _launches(m: ModuleInfo, name: str) -> list[tuple[ast.Call, ast.expr | None, list, list]]:
    """The ``<x>.launch(fn, ...)`` calls of ``m`` that run a function named ``name`` (``fn``,
    ``obj.fn``, ``partial(fn, ...)``), with the function expression and the partial's
    arguments. Only the statements mentioning ``name`` can hold one (and are depended on)."""
    found = []
    for call in m.calls_in_statements_mentioning("launch", name):
        if not isinstance(call.func, ast.Attribute):
            continue
        first = call.args[0] if call.args else next((kw.value for kw in call.keywords if kw.arg == "function"), None)
        pre_args: list[ast.AST] = []
        pre_kwargs: list[ast.keyword] = []
        if isinstance(first, ast.Call) and callee_name(first) == "partial" and first.args:
            pre_args, pre_kwargs = list(first.args[1:]), list(first.keywords)
            first = first.args[0]
        terminal = first.id if isinstance(first, ast.Name) else first.attr if isinstance(first, ast.Attribute) else None
        if terminal == name:
            found.append((call, first, pre_args, pre_kwargs))
    return found


def escapes(ev: Evaluator, func: ast.AST, m: ModuleInfo) -> bool:
    """Whether ``func`` is passed somewhere as a value (``CLI(main)``, callbacks …), so that
    callers outside the module's own call sites fill its parameters."""
    if isinstance(func, ast.Lambda):
        return True
    for use in m.name_loads.get(func.name, []):
        parent = m.parent_of(use)
        if isinstance(parent, ast.Call) and parent.func is use:
            continue
        if _launched(m, use):
            continue
        return True
    return False


def _launched(m: ModuleInfo, use: ast.AST) -> bool:
    """Whether ``use`` is the function a ``<fabric>.launch(...)`` call runs: its first argument
    (or ``function=``), directly or through ``functools.partial(fn, ...)``."""
    parent = m.parent_of(use)
    if isinstance(parent, ast.Call) and callee_name(parent) == "partial" and parent.args and parent.args[0] is use:
        use, parent = parent, m.parent_of(parent)
    if isinstance(parent, ast.keyword) and parent.arg == "function":
        use, parent = parent, m.parent_of(parent)
        return isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) and parent.func.attr == "launch"
    return (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Attribute)
        and parent.func.attr == "launch"
        and bool(parent.args)
        and parent.args[0] is use
    )


def class_escapes(ev: Evaluator, cls: ClassRef) -> bool:
    """Whether the class is used as a value (a registry, a factory argument) in its module or in
    another module that mentions it, so that instances may be built by calls that do not name it."""
    modules = [cls.module]
    if ev.workspace is not None and cls.module.path:
        modules += ev.workspace.modules_mentioning(cls.name, exclude=cls.module.path, importing=cls.module.path)
    return any(_used_as_value(m, cls.name) for m in modules)


def _used_as_value(m: ModuleInfo, name: str) -> bool:
    for use in m.name_loads.get(name, []):
        parent = m.parent_of(use)
        if isinstance(parent, ast.Call) and parent.func is use:
            continue
        if isinstance(parent, ast.ClassDef) or (
            isinstance(parent, ast.Call) and callee_name(parent) in ("isinstance", "issubclass", "super")
        ):
            continue
        return True
    return False


def bind_call(ev: Evaluator, func: ast.AST, call: ast.Call, call_ctx: Ctx, skip: int = 0) -> tuple:
    params = [p.arg for p in (*func.args.posonlyargs, *func.args.args)][skip:]
    kwonly = [p.arg for p in func.args.kwonlyargs]
    env: list = []
    positional = positional_args(ev, call, call_ctx)
    starred = positional is None
    for p, (a, a_ctx) in zip(params, positional or ()):
        env.append(((id(func), p), (a, a_ctx)))
    passed = {p for (_, p), _ in env}
    for kw in call.keywords:
        if kw.arg and (kw.arg in params or kw.arg in kwonly):
            env.append(((id(func), kw.arg), (kw.value, call_ctx)))
            passed.add(kw.arg)
    if not starred and not any(kw.arg is None for kw in call.keywords):
        for p in params + kwonly:
            if p not in passed:
                env.append(((id(func), p), (None, call_ctx)))
    return tuple(env)


def _expanded(ev: Evaluator, call: ast.Call, ctx: Ctx) -> list:
    """The call's positional argument expressions with unpacked tuple displays expanded (their
    items are evaluated where the call is: the sites of a module are read unbound), else as
    written."""
    if not any(isinstance(a, ast.Starred) for a in call.args):
        return list(call.args)
    positional = positional_args(ev, call, ctx)
    return list(call.args) if positional is None else [a for a, _ in positional]


def positional_args(ev: Evaluator, call: ast.Call, ctx: Ctx) -> list[tuple[ast.AST, Ctx]] | None:
    """The call's positional arguments, each with the context it is evaluated in: ``f(*args)``
    with ``args`` a tuple display gives its items; None where an unpacked sequence is not known
    (a list may have been appended to)."""
    out: list[tuple[ast.AST, Ctx]] = []
    for a in call.args:
        if not isinstance(a, ast.Starred):
            out.append((a, ctx))
            continue
        values = ev.ev(a.value, ctx)
        seq = values[0] if len(values) == 1 else None
        if not isinstance(seq, Seq) or not seq.fixed or seq.ctx is None:
            return None
        out += [(item, seq.ctx) for item in seq.items]
    return out


def constructions(ev: Evaluator, cls: ClassRef) -> list[tuple[ast.Call, Ctx]]:
    """The calls ``cls(...)`` that build instances of ``cls``: in its module and in the other
    modules of the workspace that mention its name."""
    m = cls.module
    out = [
        (call, Ctx(m))
        for call in m.calls_by_name.get(cls.name, [])
        if any(is_def(ev, v, cls.node, m) for v in ev.ev(call.func, Ctx(m)))
    ]
    if ev.workspace is None:
        return out
    for other in ev.workspace.modules_mentioning(cls.name, exclude=m.path, importing=m.path):
        ctx = Ctx(other)
        out += [
            (call, ctx)
            for call in other.calls_by_name.get(cls.name, [])
            if any(is_def(ev, v, cls.node, m) for v in ev.ev(call.func, ctx))
        ]
    return out
