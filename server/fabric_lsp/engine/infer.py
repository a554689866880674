"""Static inference of the strategy a Fabric object has.

An abstract interpreter over :mod:`ast`: every expression evaluates to a list of *alternatives*
(the values it may have on some path). Names are resolved by a reaching-definitions walk (the last
assignment that reaches a use wins; ``if``/``else`` give two alternatives), attributes of ``self``
by every assignment in the class, parameters by the call sites in the module (including
``fabric.launch(fn)``, which calls ``fn(fabric)``) and imported names by loading the defining
module through the :class:`~fabric_lsp.engine.workspace.Workspace` (jedi finds the file).

Nothing is ever executed. Inference is bounded (:data:`MAX_DEPTH`, :data:`MAX_STEPS`,
:data:`MAX_SECONDS` per call site); when a bound is hit the answer is "unknown", never a hang.
"""

from __future__ import annotations

import ast
import os
import sys
import time
from typing import TYPE_CHECKING, Optional

from fabric_lsp import facts
from fabric_lsp.facts import Kind
from fabric_lsp.engine.bindings import MISSING, Binding, attr_target_value, block_bindings, returns_of, stmt_bindings, _binds, _match_target
from fabric_lsp.engine.modules import FUNC_TYPES, ModuleInfo
from fabric_lsp.engine.values import (
    MAX_ALTERNATIVES,
    MAX_ENV,
    MAX_SECONDS,
    UNKNOWN,
    AcceleratorInst,
    ArgNamespace,
    ArgParser,
    Budget,
    BudgetExceeded,
    ClassRef,
    Const,
    Ctx,
    DictVal,
    FabricInst,
    FuncRef,
    Instance,
    ModuleRef,
    Origin,
    QualRef,
    Seq,
    StrategyChoice,
    StrategyInst,
    Unknown,
    Value,
    short,
    with_step,
)

if TYPE_CHECKING:  # pragma: no cover
    from fabric_lsp.engine.workspace import Workspace


#: Packages known by their qualified names only (the standard library, CLI and numeric
#: libraries): their source is never loaded, so ``argparse.ArgumentParser`` stays a name.
OPAQUE_PACKAGES = frozenset(getattr(sys, "stdlib_module_names", ())) | frozenset(
    {"typing_extensions", "click", "typer", "jsonargparse", "torch", "numpy", "jax", "deepspeed", "transformers", "hydra", "omegaconf"}
)



# --------------------------------------------------------------------------------------------
# The evaluator
# --------------------------------------------------------------------------------------------


class Inference:
    """Evaluates expressions of one module (and the modules it reaches) to alternatives."""

    def __init__(self, workspace: Optional["Workspace"] = None) -> None:
        self.workspace = workspace
        self.budget = Budget()

    def start(self) -> None:
        self.budget = Budget(deadline=time.monotonic() + MAX_SECONDS)

    # -- entry points ------------------------------------------------------------------------
    def evaluate(self, node: ast.AST, module: ModuleInfo) -> list[Value]:
        self.start()
        try:
            return self.ev(node, Ctx(module))
        except (BudgetExceeded, RecursionError):
            return [Unknown("inference budget exhausted")]

    # -- core --------------------------------------------------------------------------------
    def ev(self, node: ast.AST, ctx: Ctx) -> list[Value]:
        self.budget.tick()
        key = (id(node), ctx.env)
        if key in self.budget.active:
            return [Unknown("recursive definition")]
        self.budget.active.add(key)
        try:
            values = self._ev(node, ctx.deeper())
        finally:
            self.budget.active.discard(key)
        if len(values) > MAX_ALTERNATIVES:
            values = values[:MAX_ALTERNATIVES] + [Unknown("too many alternatives")]
        return values

    def _ev(self, node: ast.AST, ctx: Ctx) -> list[Value]:
        m = ctx.module
        if isinstance(node, ast.Constant):
            return [Const(node.value, Origin(m.span(node), m.segment(node), m.path))]
        if isinstance(node, ast.Name):
            return self.ev_name(node.id, node, ctx)
        if isinstance(node, ast.Attribute):
            return self.ev_attribute(node, ctx)
        if isinstance(node, ast.Call):
            return self.ev_call(node, ctx)
        if isinstance(node, ast.IfExp):
            return self.ev(node.body, ctx) + self.ev(node.orelse, ctx)
        if isinstance(node, ast.BoolOp):
            out: list[Value] = []
            for v in node.values:
                out += self.ev(v, ctx)
            return out
        if isinstance(node, (ast.List, ast.Tuple)):
            if any(isinstance(e, ast.Starred) for e in node.elts):
                return [UNKNOWN]
            return [Seq(len(node.elts), tuple(node.elts), ctx)]
        if isinstance(node, ast.JoinedStr):
            return self.ev_fstring(node, ctx)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.ev_concat(node, ctx)
        if isinstance(node, ast.NamedExpr):
            return self.ev(node.value, ctx)
        if isinstance(node, ast.Dict):
            return [DictVal(node, ctx)]
        if isinstance(node, ast.Subscript):
            return self.ev_subscript(node, ctx)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            if isinstance(node.operand.value, (int, float)):
                return [Const(-node.operand.value, Origin(m.span(node), m.segment(node), m.path))]
        return [Unknown(type(node).__name__)]

    def ev_subscript(self, node: ast.Subscript, ctx: Ctx) -> list[Value]:
        keys = None
        key_vals = self.ev(node.slice, ctx)
        if all(isinstance(k, Const) for k in key_vals):
            keys = [k.value for k in key_vals]
        out: list[Value] = []
        for base in self.ev(node.value, ctx):
            if isinstance(base, DictVal):
                for k, v in zip(base.node.keys, base.node.values):
                    if k is None:
                        out.append(Unknown("dict unpacking"))
                        continue
                    if keys is not None and isinstance(k, ast.Constant) and k.value not in keys:
                        continue
                    out += self.ev(v, base.ctx)
            elif isinstance(base, Seq):
                items = list(base.items)
                if keys is not None and all(isinstance(k, int) and -len(items) <= k < len(items) for k in keys):
                    items = [items[k] for k in keys]
                for item in items:
                    out += self.ev(item, base.ctx or ctx)
            else:
                out.append(Unknown("subscript"))
        return out or [Unknown("subscript")]

    # strings built from constants -----------------------------------------------------------
    def _const_strings(self, node: ast.AST, ctx: Ctx) -> Optional[list[str]]:
        vals = self.ev(node, ctx)
        out = []
        for v in vals:
            if isinstance(v, Const) and isinstance(v.value, (str, int)) and not isinstance(v.value, bool):
                out.append(str(v.value))
            else:
                return None
        return out

    def ev_fstring(self, node: ast.JoinedStr, ctx: Ctx) -> list[Value]:
        parts: list[list[str]] = []
        for piece in node.values:
            if isinstance(piece, ast.Constant):
                parts.append([str(piece.value)])
            elif isinstance(piece, ast.FormattedValue) and piece.format_spec is None and piece.conversion in (-1, 115):
                strings = self._const_strings(piece.value, ctx)
                if strings is None:
                    return [Unknown("f-string")]
                parts.append(strings)
            else:
                return [Unknown("f-string")]
        results = [""]
        for options in parts:
            results = [r + o for r in results for o in options][:MAX_ALTERNATIVES]
        o = Origin(ctx.module.span(node), ctx.module.segment(node), ctx.module.path)
        return [Const(r, o) for r in results]

    def ev_concat(self, node: ast.BinOp, ctx: Ctx) -> list[Value]:
        left = self._const_strings(node.left, ctx)
        right = self._const_strings(node.right, ctx)
        if left is None or right is None:
            return [Unknown("expression")]
        o = Origin(ctx.module.span(node), ctx.module.segment(node), ctx.module.path)
        return [Const(a + b, o) for a in left for b in right][:MAX_ALTERNATIVES]

    # names -----------------------------------------------------------------------------------
    def ev_name(self, name: str, node: ast.AST, ctx: Ctx) -> list[Value]:
        m = ctx.module
        scope = m.scope_of(node)
        stmt = m.stmt_of(node)
        # walk outwards through enclosing scopes until one binds the name
        crossed = False  # read from inside a nested function: the outer value when it runs
        while True:
            if isinstance(scope, ast.ClassDef) and not self._binds_in(scope, name, m):
                scope, stmt = m.scope_of(scope), scope
                continue
            if isinstance(scope, (*FUNC_TYPES, ast.Lambda)) and m.declared_global(scope, name):
                return self.ev_module_name(name, m, ctx)
            if isinstance(scope, ast.Module) or name in m.local_names(scope):
                break
            crossed = crossed or isinstance(scope, (*FUNC_TYPES, ast.Lambda))
            stmt = m.stmt_of(scope) if not isinstance(scope, ast.Module) else None
            scope = m.scope_of(scope)
        if crossed and isinstance(scope, ast.Module):
            return self.ev_module_name(name, m, ctx)
        if crossed:
            body = scope.body if isinstance(scope.body, list) else [scope.body]
            bindings, definite = block_bindings(body, name)
        else:
            bindings, definite = self.reaching(name, stmt, scope, m)
        out: list[Value] = []
        for b in bindings:
            out += self.ev_binding(b, name, ctx)
        if not definite:
            # a path on which the name is unbound raises NameError before reaching the use: it
            # adds no alternative, unless the name is a parameter
            if isinstance(scope, (*FUNC_TYPES, ast.Lambda)):
                params = scope.args
                if name in {a.arg for a in (*params.posonlyargs, *params.args, *params.kwonlyargs)} or not bindings:
                    out += self.ev_param(scope, name, ctx)
            elif not bindings:
                out.append(Unknown(f"`{name}` is not defined here"))
        return out or [UNKNOWN]

    def _binds_in(self, cls: ast.ClassDef, name: str, m: ModuleInfo) -> bool:
        return any(stmt_bindings(s, name)[0] for s in cls.body)

    def _stmt_in(self, scope: ast.AST, stmt: Optional[ast.AST], m: ModuleInfo) -> bool:
        return stmt is not None and m.scope_of(stmt) is scope

    def ev_module_name(self, name: str, m: ModuleInfo, ctx: Ctx) -> list[Value]:
        if m.tree is None:
            return [UNKNOWN]
        bindings, definite = block_bindings(m.tops_with(name), name)
        bindings = bindings + self._global_assignments(name, m)
        out: list[Value] = []
        for b in bindings:
            out += self.ev_binding(b, name, Ctx(m, (), ctx.depth))
        if not bindings:
            out.append(Unknown(f"`{name}` is not defined"))
        return out

    def _global_assignments(self, name: str, m: ModuleInfo) -> list[Binding]:
        """Assignments to ``name`` inside functions that declare ``global name``."""
        out: list[Binding] = []
        for top in m.tops_with_all("global", name):
            for func in ast.walk(top):
                if not isinstance(func, FUNC_TYPES):
                    continue
                if not any(isinstance(g, ast.Global) and name in g.names for g in func.body):
                    continue
                for node in ast.walk(func):
                    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                        for t in targets:
                            matched = _match_target(t, node.value, name)
                            if matched is not None:
                                out.append(Binding("assign", node, t, matched))
        return out

    def reaching(self, name: str, stmt: Optional[ast.AST], scope: ast.AST, m: ModuleInfo) -> tuple[list[Binding], bool]:
        found: list[Binding] = []
        cur = stmt
        while cur is not None and cur is not scope:
            parent, block, idx = m.block_of(cur)
            if idx >= 0:
                if parent is m.tree:  # module level: only the statements that mention the name
                    block, idx = m.tops_before(name, cur)
                for prev in reversed(block[:idx]):
                    self.budget.tick()
                    b, definite = stmt_bindings(prev, name)
                    found.extend(b)
                    if definite:
                        return found, True
            if parent is None or parent is scope:
                break
            # the header of the enclosing block may bind the name for its body
            if isinstance(parent, (ast.For, ast.AsyncFor)) and any(cur is x for x in parent.body) and _binds(parent.target, name):
                kind = "for" if isinstance(parent.target, ast.Name) else "unknown"
                found.append(Binding(kind, parent, parent.target, parent.iter))
                return found, True
            if isinstance(parent, (ast.With, ast.AsyncWith)):
                items = [i for i in parent.items if i.optional_vars is not None and _binds(i.optional_vars, name)]
                if items:
                    found.append(Binding("unknown", parent, items[0].optional_vars))
                    return found, True
            if isinstance(parent, ast.ExceptHandler) and parent.name == name:
                found.append(Binding("unknown", parent))
                return found, True
            if isinstance(parent, ast.ExceptHandler) or type(parent).__name__ == "match_case":
                parent = m.parents.get(parent)
            cur = parent
        return found, False

    def ev_binding(self, b: Binding, name: str, ctx: Ctx) -> list[Value]:
        m = ctx.module
        in_class = isinstance(m.parents.get(b.node), ast.ClassDef)
        if b.kind in ("assign", "annotation") and in_class and isinstance(b.node, ast.AnnAssign):
            # a class field with a Literal[...] type (dataclass configs filled from a CLI)
            literal = self.literal_values(b.node.annotation, ctx, f"field `{name}`")
            if literal is not None:
                return literal
        if b.kind == "assign":
            return with_step(self.ev(b.value, ctx), self._origin(b.node, m))
        if b.kind == "annotation":
            return [Unknown(f"`{name}` is only annotated")]
        if b.kind == "for":
            out: list[Value] = []
            for seq in self.ev(b.value, ctx):
                if isinstance(seq, Seq) and seq.items:
                    for item in seq.items:
                        out += self.ev(item, seq.ctx or ctx)
                else:
                    out.append(Unknown(f"loop variable `{name}`"))
            return out
        if b.kind == "import":
            return self.ev_import(b.node, b.value, ctx)
        if b.kind == "def":
            return [FuncRef(b.node, m)]
        if b.kind == "class":
            return [ClassRef(b.node, m)]
        return [Unknown(f"`{name}` is bound by {type(b.node).__name__}")]

    def _origin(self, node: ast.AST, m: ModuleInfo) -> Origin:
        return Origin(m.span(node), short(m.segment(node)), m.path)

    def literal_values(self, annotation: Optional[ast.AST], ctx: Ctx, what: str) -> Optional[list[Value]]:
        """The values of a ``Literal[...]`` annotation (also inside ``Optional``/``Union``)."""
        if annotation is None or not isinstance(annotation, ast.Subscript):
            return None
        head = self.ev(annotation.value, Ctx(ctx.module, (), ctx.depth))
        names = {v.qualname for v in head if isinstance(v, QualRef)}
        m = ctx.module
        elts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
        if names & {"typing.Literal", "typing_extensions.Literal"}:
            return [
                Const(e.value, self._origin(e, m), f'"{e.value}" from `Literal[...]` of {what}')
                for e in elts
                if isinstance(e, ast.Constant)
            ] or None
        if names & {"typing.Optional", "typing.Union"}:
            out: list[Value] = []
            for e in elts:
                out += self.literal_values(e, ctx, what) or []
            return out or None
        return None

    def ev_import(self, stmt: ast.AST, alias: ast.alias, ctx: Ctx) -> list[Value]:
        m = ctx.module
        if isinstance(stmt, ast.Import):
            if alias.asname:
                return self.ev_qualname(alias.name, ctx)
            return self.ev_qualname(alias.name.split(".")[0], ctx)
        assert isinstance(stmt, ast.ImportFrom)
        base = stmt.module or ""
        if stmt.level:
            if self.workspace is None or m.path is None:
                return [Unknown("relative import")]
            target = self.workspace.resolve_relative(m, base, stmt.level)
            if target is None:
                return [Unknown("relative import")]
            base = target
        return self.ev_qualname(f"{base}.{alias.name}" if base else alias.name, ctx)

    def ev_qualname(self, qualname: str, ctx: Ctx) -> list[Value]:
        top = qualname.split(".")[0]
        if top in facts.KNOWN_PACKAGES:
            return [QualRef(facts.canonical(qualname))]
        if top in OPAQUE_PACKAGES:
            return [QualRef(qualname)]  # known by name only: never loaded
        if self.workspace is None:
            return [Unknown(f"`{qualname}` is not analysed")]
        # a module of the workspace (or another installed package): find it with jedi
        module = self.workspace.load_module_named(qualname, ctx.module)
        if module is not None:
            return [ModuleRef(module)]
        parent, _, attr = qualname.rpartition(".")
        if parent:
            pmod = self.workspace.load_module_named(parent, ctx.module)
            if pmod is not None:
                return self.ev_module_name(attr, pmod, ctx)
        return [Unknown(f"`{qualname}` could not be resolved")]

    # parameters ----------------------------------------------------------------------------
    def ev_param(self, func: ast.AST, name: str, ctx: Ctx) -> list[Value]:
        m = ctx.module
        args = func.args
        params = [*args.posonlyargs, *args.args]
        names = [p.arg for p in params]
        kwonly = [p.arg for p in args.kwonlyargs]
        if name not in names and name not in kwonly:
            return [Unknown(f"`{name}` may be unbound")]
        bound = ctx.bound(func, name)
        if bound is not None:
            expr, arg_ctx = bound
            if expr is None:
                return self._param_default(func, name, ctx) or [UNKNOWN]
            return self.ev(expr, arg_ctx)
        cls = m.enclosing_class(func)
        is_method = cls is not None and not any(
            isinstance(d, ast.Name) and d.id == "staticmethod" for d in func.decorator_list
        )
        if is_method and names and names[0] == name:
            if any(isinstance(d, ast.Name) and d.id == "classmethod" for d in func.decorator_list):
                return [ClassRef(cls, m)]
            return [Instance(ClassRef(cls, m))]
        out: list[Value] = []
        sites = list(self.call_sites(func, m, is_method, cls))
        for site_args, site_ctx, site_call in sites:
            expr = site_args.get(name, MISSING)
            if expr is MISSING:
                out += self._param_default(func, name, ctx) or [Unknown("argument not passed")]
            elif expr is None:
                out.append(Unknown("argument unpacked"))
            else:
                out += with_step(self.ev(expr, site_ctx), self._origin(site_call, m))
        if not sites or self._escapes(func, m) or getattr(func, "decorator_list", None):
            # a decorated function (click, hydra …) or one passed around is called with values
            # its own module does not show
            choices = self._param_choices(func, name, ctx)
            if choices is not None:
                return out + choices
            default = self._param_default(func, name, ctx)
            annotated = self._param_annotation(func, name, ctx)
            out += annotated
            if default:
                out += default + [Unknown("parameter filled by a caller not in view")]
            if not out:
                out.append(Unknown(f"parameter `{name}`"))
        return out

    def _escapes(self, func: ast.AST, m: ModuleInfo) -> bool:
        """Whether ``func`` is passed somewhere as a value (``CLI(main)``, callbacks …), so that
        callers outside the module's own call sites fill its parameters."""
        if isinstance(func, ast.Lambda):
            return True
        for use in m.name_loads.get(func.name, []):
            parent = m.parents.get(use)
            if isinstance(parent, ast.Call) and parent.func is use:
                continue
            if (
                isinstance(parent, ast.Call)
                and isinstance(parent.func, ast.Attribute)
                and parent.func.attr == "launch"
                and parent.args
                and parent.args[0] is use
            ):
                continue
            return True
        return False

    def _param_choices(self, func: ast.AST, name: str, ctx: Ctx) -> Optional[list[Value]]:
        """Values a CLI may fill ``name`` with: ``Literal[...]`` or a click ``Choice``."""
        for p in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs):
            if p.arg == name:
                literal = self.literal_values(p.annotation, ctx, f"parameter `{name}`")
                if literal is not None:
                    return literal
        for deco in getattr(func, "decorator_list", ()):
            if not isinstance(deco, ast.Call) or _callee_name(deco) not in ("option", "argument"):
                continue
            names = [a.value for a in deco.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            dest = next((n for n in names if n.isidentifier()), None)
            if dest is None:
                longs = [n for n in names if n.startswith("--")] or names
                dest = longs[0].lstrip("-").replace("-", "_") if longs else None
            if dest != name:
                continue
            for kw in deco.keywords:
                if kw.arg == "type" and isinstance(kw.value, ast.Call) and _callee_name(kw.value) == "Choice" and kw.value.args:
                    return self._choice_values(kw.value.args[0], ctx, f"the click choices of `{names[0]}`")
        return None

    def _choice_values(self, expr: ast.AST, ctx: Ctx, what: str) -> list[Value]:
        out: list[Value] = []
        for seq in self.ev(expr, Ctx(ctx.module, (), ctx.depth)):
            if isinstance(seq, Seq):
                for item in seq.items:
                    for v in self.ev(item, seq.ctx or ctx):
                        if isinstance(v, Const):
                            v = Const(v.value, v.origin, f'"{v.value}" from {what}')
                        out.append(v)
            else:
                out.append(Unknown(f"choices of {what}"))
        return out

    def _param_default(self, func: ast.AST, name: str, ctx: Ctx) -> list[Value]:
        args = func.args
        positional = [*args.posonlyargs, *args.args]
        defaults = dict(zip([p.arg for p in positional[len(positional) - len(args.defaults) :]], args.defaults))
        for p, d in zip(args.kwonlyargs, args.kw_defaults):
            if d is not None:
                defaults[p.arg] = d
        if name in defaults:
            return self.ev(defaults[name], Ctx(ctx.module, (), ctx.depth))
        return []

    def _param_annotation(self, func: ast.AST, name: str, ctx: Ctx) -> list[Value]:
        for p in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs):
            if p.arg == name and p.annotation is not None:
                ann = p.annotation
                if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
                    return []
                for v in self.ev(ann, Ctx(ctx.module, (), ctx.depth)):
                    if self.is_fabric_class(v):
                        return [FabricInst((StrategyChoice(None, "a `Fabric` parameter", "?"),), None)]
        return []

    def call_sites(self, func: ast.AST, m: ModuleInfo, is_method: bool, cls: Optional[ast.ClassDef]):
        """Yield ({param name: argument expression | None when unpacked}, ctx, call) for each
        call of ``func``: in its own module, then in the other modules of the workspace that
        mention its name. ``x.launch(func, *args)`` counts as ``func(x, *args)``; so do
        ``launch(function=func)`` and ``launch(functools.partial(func, ...))``."""
        if isinstance(func, ast.Lambda):
            return
        yield from self._sites_in(func, m, is_method, cls, m, verify=False)
        if self.workspace is None:
            return
        name = cls.name if (is_method and cls is not None and func.name == "__init__") else func.name
        for other in self.workspace.modules_mentioning(name, exclude=m.path):
            yield from self._sites_in(func, m, is_method, cls, other, verify=True)

    def _is_def(self, v: Value, node: ast.AST, m: ModuleInfo) -> bool:
        """Whether ``v`` is the function or class ``node`` of module ``m`` (modules are parsed
        separately, so definitions are matched by file and position)."""
        if not isinstance(v, (FuncRef, ClassRef)):
            return False
        if v.node is node:
            return True
        same_file = v.module.path and m.path and os.path.abspath(v.module.path) == os.path.abspath(m.path)
        return bool(same_file) and (v.node.lineno, v.node.col_offset) == (node.lineno, node.col_offset)

    @staticmethod
    def _bind_args(params: list[str], kwonly: list[str], args: list, keywords: list):
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

    def _sites_in(self, func, m: ModuleInfo, is_method: bool, cls, where: ModuleInfo, verify: bool):
        params = [p.arg for p in (*func.args.posonlyargs, *func.args.args)]
        kwonly = [p.arg for p in func.args.kwonlyargs]
        ctx = Ctx(where)
        if is_method and cls is not None and func.name == "__init__":
            candidates, target = where.calls_by_name.get(cls.name, []), cls
        elif is_method:
            candidates = [c for c in where.calls_by_name.get(func.name, []) if isinstance(c.func, ast.Attribute)]
            target = func
        else:
            candidates = [c for c in where.calls_by_name.get(func.name, []) if isinstance(c.func, ast.Name)]
            target = func
        offset = 1 if is_method else 0
        for call in candidates:
            if verify and not any(self._is_def(v, target, m) for v in self.ev(call.func, ctx)):
                continue
            yield self._bind_args(params[offset:], kwonly, call.args, call.keywords), ctx, call
        for call in where.calls_by_name.get("launch", []):
            if not isinstance(call.func, ast.Attribute):
                continue
            first = call.args[0] if call.args else next((kw.value for kw in call.keywords if kw.arg == "function"), None)
            rest = list(call.args[1:])
            pre_args: list[ast.AST] = []
            pre_kwargs: list[ast.keyword] = []
            if isinstance(first, ast.Call) and _callee_name(first) == "partial" and first.args:
                pre_args, pre_kwargs = list(first.args[1:]), list(first.keywords)
                first = first.args[0]
            terminal = first.id if isinstance(first, ast.Name) else first.attr if isinstance(first, ast.Attribute) else None
            if terminal != func.name:
                continue
            skip = 0
            if verify or isinstance(first, ast.Attribute):
                matches = [v for v in self.ev(first, ctx) if self._is_def(v, func, m)]
                if not matches:
                    continue
                skip = 1 if isinstance(matches[0], FuncRef) and matches[0].bound_self is not None else 0
            elif is_method:
                continue
            receivers = self.ev(call.func.value, ctx)
            if not any(isinstance(r, FabricInst) for r in receivers):
                continue
            mapping = self._bind_args(params[skip:], kwonly, [*pre_args, call.func.value, *rest], [*pre_kwargs, *call.keywords])
            yield mapping, ctx, call

    # attributes ----------------------------------------------------------------------------
    def ev_attribute(self, node: ast.Attribute, ctx: Ctx) -> list[Value]:
        out: list[Value] = []
        for base in self.ev(node.value, ctx):
            out += self.attribute_of(base, node.attr, ctx)
        return out or [UNKNOWN]

    def attribute_of(self, base: Value, attr: str, ctx: Ctx) -> list[Value]:
        if isinstance(base, QualRef):
            return [QualRef(facts.canonical(f"{base.qualname}.{attr}"))]
        if isinstance(base, ModuleRef):
            sub = None
            if self.workspace is not None and base.module.name:
                if not self._module_binds(base.module, attr):
                    sub = self.workspace.load_module_named(f"{base.module.name}.{attr}", base.module)
            if sub is not None:
                return [ModuleRef(sub)]
            return self.ev_module_name(attr, base.module, ctx)
        if isinstance(base, Instance):
            return self.instance_attribute(base, attr, ctx)
        if isinstance(base, ClassRef):
            return self.class_attribute(base, attr, ctx)
        if isinstance(base, ArgNamespace):
            return self.cli_option(base.module, attr, ctx)
        if isinstance(base, FabricInst) and attr in ("strategy", "_strategy"):
            return [Unknown("strategy of a Fabric")]
        return [Unknown(f"attribute `{attr}`")]

    def cli_option(self, m: ModuleInfo, dest: str, ctx: Ctx) -> list[Value]:
        """``args.<dest>`` after ``parser.parse_args()``: the option's ``choices``, else unknown."""
        for call in m.calls_by_name.get("add_argument", []):
            names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            kwargs = {kw.arg: kw.value for kw in call.keywords if kw.arg}
            explicit = kwargs.get("dest")
            if isinstance(explicit, ast.Constant):
                option_dest = explicit.value
            else:
                longs = [n for n in names if n.startswith("--")] or names
                option_dest = longs[0].lstrip("-").replace("-", "_") if longs else None
            if option_dest != dest:
                continue
            option = names[0] if names else dest
            if "choices" in kwargs:
                return self._choice_values(kwargs["choices"], Ctx(m, (), ctx.depth), f"the choices of `{option}`")
            free = Unknown(f"free command-line option `{option}`")
            if "default" in kwargs:  # what the script does when run as shipped
                return self._defaults(kwargs["default"], Ctx(m, (), ctx.depth), f"the default of `{option}`") + [free]
            return [free]
        return [Unknown(f"command-line option `{dest}`")]

    def _defaults(self, expr: ast.AST, ctx: Ctx, what: str) -> list[Value]:
        out: list[Value] = []
        for v in self.ev(expr, ctx):
            if isinstance(v, Const) and isinstance(v.value, str):
                v = Const(v.value, v.origin, f'"{v.value}", {what}')
            out.append(v)
        return out

    def _module_binds(self, module: ModuleInfo, name: str) -> bool:
        return module.tree is not None and bool(block_bindings(module.tops_with(name), name)[0])

    def class_attribute(self, cls: ClassRef, attr: str, ctx: Ctx) -> list[Value]:
        for klass in self.mro(cls):
            bindings, _ = block_bindings(klass.node.body, attr)
            if bindings:
                out: list[Value] = []
                for b in bindings:
                    out += self.ev_binding(b, attr, Ctx(klass.module, (), ctx.depth))
                return out
        return [Unknown(f"attribute `{attr}`")]

    def instance_attribute(self, inst: Instance, attr: str, ctx: Ctx) -> list[Value]:
        out: list[Value] = []
        for klass in self.mro(inst.cls):
            m = klass.module
            for item in klass.node.body:
                if not isinstance(item, FUNC_TYPES):
                    continue
                if item.name == attr:
                    found: list[Value] = [FuncRef(item, m, bound_self=inst)]
                    if inst.call is None:  # `self`: a subclass may override the method
                        for sub in self.subclasses(klass):
                            for other in sub.node.body:
                                if isinstance(other, FUNC_TYPES) and other.name == attr:
                                    found.append(FuncRef(other, sub.module, bound_self=inst))
                    return found
                params = item.args.posonlyargs + item.args.args
                if not params:
                    continue
                self_name = params[0].arg
                env = ctx.env
                if inst.call is not None and inst.ctx is not None and item.name == "__init__":
                    env = self._bind_call(item, inst.call, inst.ctx, skip=1) + env
                for node in ast.walk(item):
                    targets = []
                    if isinstance(node, ast.Assign):
                        targets = [(t, node.value) for t in node.targets]
                    elif isinstance(node, ast.AnnAssign) and node.value is not None:
                        targets = [(node.target, node.value)]
                    for t, value in targets:
                        expr = attr_target_value(t, value, self_name, attr)
                        if expr is MISSING:
                            continue
                        if expr is None:
                            out.append(Unknown(f"`self.{attr}` unpacked"))
                        else:
                            out += with_step(self.ev(expr, Ctx(m, env, ctx.depth)), self._origin(node, m))
            if out:
                return out
            bindings, _ = block_bindings(klass.node.body, attr)
            for b in bindings:
                out += self.ev_binding(b, attr, Ctx(m, (), ctx.depth))
            if out:
                return out
        return [Unknown(f"attribute `{attr}`")]

    def subclasses(self, cls: ClassRef) -> list[ClassRef]:
        """Classes of the same module deriving (at any depth) from ``cls``."""
        m = cls.module
        if m.tree is None:
            return []
        out: list[ClassRef] = []
        for node in m.classes():
            if node is not cls.node and node.bases:
                ref = ClassRef(node, m)
                if any(k.node is cls.node for k in self.mro(ref)[1:]):
                    out.append(ref)
        return out

    def mro(self, cls: ClassRef) -> list[ClassRef]:
        seen: list[ClassRef] = []
        stack = [cls]
        while stack and len(seen) < 16:
            c = stack.pop(0)
            if any(s.node is c.node for s in seen):
                continue
            seen.append(c)
            for base in c.node.bases:
                for v in self.ev(base, Ctx(c.module)):
                    if isinstance(v, ClassRef):
                        stack.append(v)
        return seen

    # calls ---------------------------------------------------------------------------------
    def ev_call(self, node: ast.Call, ctx: Ctx) -> list[Value]:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "__init__":
            return [UNKNOWN]
        if isinstance(func, ast.Name) and func.id == "super":
            return [UNKNOWN]
        if isinstance(func, ast.Attribute) and func.attr in ("parse_args", "parse_known_args", "parse_object"):
            parsers = [v for v in self.ev(func.value, ctx) if isinstance(v, ArgParser)]
            if parsers:
                ns = ArgNamespace(parsers[0].module)
                return [Seq(2, (), ctx), ns] if func.attr == "parse_known_args" else [ns]
        out: list[Value] = []
        callees = self.ev(func, ctx)
        for callee in callees:
            out += self.call_value(callee, node, ctx)
        if not out and any(isinstance(c, FuncRef) for c in callees):
            return []  # every callee raises
        return out or [UNKNOWN]

    def call_value(self, callee: Value, node: ast.Call, ctx: Ctx) -> list[Value]:
        m = ctx.module
        origin = Origin(m.span(node), short(m.segment(node)), m.path)
        if isinstance(callee, QualRef):
            q = callee.qualname
            if facts.is_fabric_class(q):
                return [FabricInst(self.fabric_choices(node, ctx), origin, "Fabric")]
            kind = facts.strategy_kind_of_class(q)
            if kind is not None:
                return [StrategyInst(kind, q.rsplit(".", 1)[-1], origin)]
            if facts.is_xla_accelerator_class(q):
                return [AcceleratorInst(True, origin)]
            if q.startswith("lightning.fabric.accelerators."):
                return [AcceleratorInst(False, origin)]
            if q in ("argparse.ArgumentParser", "jsonargparse.ArgumentParser"):
                return [ArgParser(m)]
            if q in ("os.environ.get", "os.getenv", "os.environ.setdefault"):
                if len(node.args) >= 2:
                    key = m.segment(node.args[0])
                    return self._defaults(node.args[1], ctx, f"the default of environment variable {key}") + [
                        Unknown(f"environment variable {key}")
                    ]
                return [Unknown("environment variable")]
            if q in ("jsonargparse.CLI", "jsonargparse.auto_cli", "tyro.cli", "simple_parsing.parse") and node.args:
                # builds and returns an instance of the class it is given, filled from the CLI
                out: list[Value] = []
                for target in self.ev(node.args[0], ctx):
                    out.append(Instance(target) if isinstance(target, ClassRef) else Unknown("value filled from the command line"))
                return out
            if q.startswith(facts.FOREIGN_PREFIXES):
                return [Unknown(f"`{q}` is not one of Fabric's classes")]
            return [Unknown(f"call of `{q}`")]
        if isinstance(callee, ClassRef):
            lineage = self.lightning_base(callee)
            if lineage is not None:
                q = lineage
                if facts.is_fabric_class(q):
                    return [FabricInst(self.fabric_choices(node, ctx, callee), origin, callee.name)]
                kind = facts.strategy_kind_of_class(q)
                if kind is not None:
                    return [StrategyInst(kind, callee.name, origin)]
                if facts.is_xla_accelerator_class(q):
                    return [AcceleratorInst(True, origin)]
            return [Instance(callee, node, ctx)]
        if isinstance(callee, FuncRef):
            return self.call_function(callee, node, ctx)
        return [Unknown("call")]

    def lightning_base(self, cls: ClassRef) -> Optional[str]:
        """The Lightning class (canonical name) a user class derives from, at any depth."""
        for klass in self.mro(cls):
            for base in klass.node.bases:
                for v in self.ev(base, Ctx(klass.module)):
                    if isinstance(v, QualRef) and (
                        facts.is_fabric_class(v.qualname)
                        or facts.strategy_kind_of_class(v.qualname) is not None
                        or facts.is_xla_accelerator_class(v.qualname)
                    ):
                        return facts.canonical(v.qualname)
        return None

    def is_fabric_class(self, v: Value) -> bool:
        if isinstance(v, QualRef):
            return facts.is_fabric_class(v.qualname)
        if isinstance(v, ClassRef):
            base = self.lightning_base(v)
            return base is not None and facts.is_fabric_class(base)
        return False

    def _bind_call(self, func: ast.AST, call: ast.Call, call_ctx: Ctx, skip: int = 0) -> tuple:
        params = [p.arg for p in (*func.args.posonlyargs, *func.args.args)][skip:]
        kwonly = [p.arg for p in func.args.kwonlyargs]
        env: list = []
        starred = any(isinstance(a, ast.Starred) for a in call.args)
        for p, a in zip(params, call.args):
            if starred:
                break
            env.append(((id(func), p), (a, call_ctx)))
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

    def call_function(self, callee: FuncRef, node: ast.Call, ctx: Ctx) -> list[Value]:
        func = callee.node
        if isinstance(func, ast.Lambda):
            return self.ev(func.body, Ctx(callee.module, (), ctx.depth))
        skip = 1 if callee.bound_self is not None else 0
        env = (self._bind_call(func, node, ctx, skip=skip) + ctx.env)[:MAX_ENV]
        fctx = Ctx(callee.module, env, ctx.depth)
        out: list[Value] = []
        returns = list(returns_of(func))
        for ret in returns:
            if ret.value is None:
                out.append(Const(None))
            else:
                out += with_step(self.ev(ret.value, fctx), self._origin(ret, callee.module))
        if not returns and func.body and isinstance(func.body[-1], ast.Raise):
            return []  # always raises (an abstract method): no value reaches the caller
        return out or [Const(None)]

    # Fabric(...) → strategy choices ----------------------------------------------------------
    def fabric_choices(self, call: ast.Call, ctx: Ctx, cls: Optional[ClassRef] = None) -> tuple[StrategyChoice, ...]:
        kwargs = {kw.arg: kw.value for kw in call.keywords if kw.arg}
        unpacked = any(kw.arg is None for kw in call.keywords)
        strategy = kwargs.get("strategy")
        if cls is not None and strategy is None:
            # a subclass may pass strategy= to super().__init__
            forced = self._subclass_forwarded(cls, call, ctx)
            if forced is not None:
                return forced
        if strategy is None:
            if unpacked:
                return (StrategyChoice(None, "strategy from `**kwargs`", "?"),)
            return self.auto_choices(kwargs, ctx)
        out: list[StrategyChoice] = []
        for v in self.ev(strategy, ctx):
            out.extend(self.choice_of(v, strategy, kwargs, ctx))
        return tuple(out) or (StrategyChoice(None, "unknown strategy", "?"),)

    def _subclass_forwarded(self, cls: ClassRef, call: ast.Call, ctx: Ctx):
        for klass in self.mro(cls):
            for item in klass.node.body:
                if isinstance(item, FUNC_TYPES) and item.name == "__init__":
                    env = self._bind_call(item, call, ctx, skip=1) + ctx.env
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
                                for v in self.ev(kwargs["strategy"], sctx):
                                    out.extend(self.choice_of(v, kwargs["strategy"], kwargs, sctx))
                                return tuple(out)
                            if not any(kw.arg is None for kw in sup.keywords):
                                return self.auto_choices(kwargs, sctx)
                    return None
        return None

    def choice_of(self, v: Value, expr: ast.AST, kwargs: dict, ctx: Ctx) -> list[StrategyChoice]:
        if isinstance(v, StrategyInst):
            return [StrategyChoice(v.kind, f"`{v.origin.text}`" if v.origin else v.class_name, v.class_name, v.origin)]
        if isinstance(v, Const) and isinstance(v.value, str):
            text = v.value.strip().lower()
            if text == facts.AUTO_STRATEGY:
                return list(self.auto_choices(kwargs, ctx, v.origin))
            kind = facts.strategy_kind_of_string(text)
            label = v.note or f'strategy="{v.value}"'
            if kind is None:
                return [StrategyChoice(None, label, "?", v.origin)]
            if kind is Kind.FSDP and text == "fsdp" and self._is_tpu(kwargs.get("accelerator"), ctx) == [True]:
                kind = Kind.XLA_FSDP
            return [StrategyChoice(kind, label, facts.KIND_CLASS_NAME[kind], v.origin)]
        if isinstance(v, Unknown):
            return [StrategyChoice(None, f"`{short(ctx.module.segment(expr), 40)}` is not known statically", "?")]
        return [StrategyChoice(None, "strategy of unknown kind", "?")]

    def _is_tpu(self, expr: Optional[ast.AST], ctx: Ctx) -> list[Optional[bool]]:
        if expr is None:
            return [False]
        out: list[Optional[bool]] = []
        for v in self.ev(expr, ctx):
            if isinstance(v, Const) and isinstance(v.value, str):
                out.append(v.value == "tpu")  # accelerator names are case-sensitive in Lightning
            elif isinstance(v, AcceleratorInst):
                out.append(v.tpu)
            else:
                out.append(None)
        return out

    def auto_choices(self, kwargs: dict, ctx: Ctx, origin: Optional[Origin] = None) -> tuple[StrategyChoice, ...]:
        accel = kwargs.get("accelerator")
        tpu = self._is_tpu(accel, ctx)
        out: list[StrategyChoice] = []
        m = ctx.module
        accel_origin = Origin(m.span(accel), short(m.segment(accel)), m.path) if accel is not None else origin
        for is_tpu in tpu:
            if is_tpu is None:
                out.append(StrategyChoice(None, "unknown accelerator", "?"))
            elif not is_tpu:
                out.append(StrategyChoice(Kind.SINGLE_DEVICE, "strategy=\"auto\"", "auto", origin))
            else:
                out.extend(self._tpu_devices(kwargs.get("devices"), ctx, accel_origin))
        return tuple(out)

    def _tpu_devices(self, expr: Optional[ast.AST], ctx: Ctx, accel_origin: Optional[Origin]) -> list[StrategyChoice]:
        many = StrategyChoice(Kind.XLA, 'accelerator="tpu" on several devices', "XLAStrategy", accel_origin)
        if expr is None:
            return [many]
        out = []
        for v in self.ev(expr, ctx):
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



def _callee_name(call: ast.Call) -> Optional[str]:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None

