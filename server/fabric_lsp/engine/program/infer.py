"""Static inference of the strategy a Fabric object has.

An abstract interpreter over :mod:`ast`: every expression evaluates to a list of *alternatives*
(the values it may have on some path). Names are resolved by a reaching-definitions walk (the last
assignment that reaches a use wins; ``if``/``else`` give two alternatives), attributes of ``self``
by every assignment in the class, parameters by the call sites in the module (including
``fabric.launch(fn)``, which calls ``fn(fabric)``) and imported names by loading the defining
module through the :class:`~fabric_lsp.engine.workspace.workspace.Workspace` (jedi finds the file).

Nothing is ever executed. Inference is bounded (:data:`MAX_DEPTH`, :data:`MAX_STEPS`,
:data:`MAX_SECONDS` per call site); when a bound is hit the answer is "unknown", never a hang.
"""

from __future__ import annotations

import ast
import dataclasses
import operator
import sys
import time
import weakref
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from fabric_lsp import facts
from fabric_lsp.engine.lightning import fabric_args, lightning_cli
from fabric_lsp.engine.python import calls, conditions, paths
from fabric_lsp.engine.python import program_options as cli_sources
from fabric_lsp.engine.python.astwalk import walk
from fabric_lsp.engine.python.bindings import (
    MISSING,
    Binding,
    attr_target_value,
    binds,
    block_bindings,
    forwarded_to,
    match_target,
    returns_of,
    stmt_bindings,
)
from fabric_lsp.engine.python.modules import FUNC_TYPES, ModuleInfo, decorated_with, last_name, method_receiver
from fabric_lsp.engine.python.values import (
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
    DataclassParser,
    DictVal,
    FabricInst,
    FuncRef,
    Instance,
    KwargsVal,
    LightningCLIInst,
    ModuleRef,
    Origin,
    PartialVal,
    QualRef,
    Seq,
    StrategyChoice,
    StrategyInst,
    TrainerInst,
    Unknown,
    Value,
    ValueTuple,
    short,
    with_step,
)

if TYPE_CHECKING:  # pragma: no cover
    from fabric_lsp.engine.workspace.workspace import Workspace

T = TypeVar("T")


#: Packages known by their qualified names only (the standard library, CLI and numeric
#: libraries): their source is never loaded, so ``argparse.ArgumentParser`` stays a name.
OPAQUE_PACKAGES = frozenset(getattr(sys, "stdlib_module_names", ())) | frozenset(
    {
        "typing_extensions",
        "click",
        "typer",
        "jsonargparse",
        "tyro",
        "simple_parsing",
        "torch",
        "numpy",
        "jax",
        "deepspeed",
        "transformers",
        "hydra",
        "omegaconf",
    }
)


# --------------------------------------------------------------------------------------------
# The evaluator
# --------------------------------------------------------------------------------------------


class Inference:
    """Evaluates expressions of one module (and the modules it reaches) to alternatives."""

    @property
    def external_lookups(self) -> int:
        """How many look-ups went outside the analysed document (other modules, the workspace):
        those the workspace's look-up functions noted in this thread."""
        return self.workspace.lookups_noted if self.workspace is not None else 0

    def __init__(self, workspace: Workspace | None = None) -> None:
        self.workspace = workspace
        self.budget = Budget()
        #: how many :meth:`bounded` questions are under way (none: an evaluation gets a budget of its own)
        self._bounded = 0
        #: the analysis' memo (:class:`~fabric_lsp.engine.workspace.memo.AskedOnce`), when there is one
        self.asked_once: Callable | None = None
        #: id(statement) → (statement, the tests it is reached under)
        self._conditions: dict[int, tuple[ast.AST, tuple]] = {}
        #: (id(test), id(bound arguments)) → (test, bound arguments, its outcomes)
        self._truths: dict[tuple[int, int], tuple[ast.AST, tuple, list]] = {}
        #: the evaluations a recursion guard cut short, in order (an answer cut short by an
        #: evaluation around it is not shared with other analyses: :mod:`fabric_lsp.engine.workspace.memo`)
        self.cuts: list[tuple] = []

    def bounded(self, compute: Callable[[], T], default: T) -> T:
        """``compute()`` under a budget of its own (:data:`MAX_STEPS` steps, :data:`MAX_SECONDS`);
        ``default`` where it runs out. The budget of an evaluation under way is put back
        afterwards: what a question asked on the way costs is its own, and that evaluation keeps
        its steps, its deadline and its recursion guard."""
        outer = self.budget
        self.budget = Budget(deadline=time.monotonic() + MAX_SECONDS)
        self._bounded += 1
        try:
            return compute()
        except (BudgetExceeded, RecursionError):
            return default
        finally:
            self._bounded -= 1
            self.budget = outer

    # -- entry points ------------------------------------------------------------------------
    def evaluate(self, node: ast.AST, module: ModuleInfo) -> list[Value]:
        return self.bounded(lambda: self.ev(node, Ctx(module)), [Unknown("inference budget exhausted")])

    def method_receivers(self, values: list[Value], method: str, module: ModuleInfo) -> list[Value]:
        """What ``<receiver>.method(...)`` runs on, for a receiver with alternatives ``values``: an
        instance whose class forwards ``method`` through ``__getattr__`` (:meth:`forward_target`)
        stands for the object it forwards to."""
        if not any(isinstance(v, Instance) for v in values):
            return values

        def forwarded() -> list[Value]:
            out: list[Value] = []
            for v in values:
                target = self.forward_target(v, method, Ctx(module)) if isinstance(v, Instance) else None
                out += [v] if target is None else target
            return out

        return self.bounded(forwarded, values)

    # -- core --------------------------------------------------------------------------------
    def ev(self, node: ast.AST, ctx: Ctx) -> list[Value]:
        if not self._bounded:  # asked outside any evaluation (a rule's own question): a budget of its own
            return self.bounded(lambda: self.ev(node, ctx), [Unknown("inference budget exhausted")])
        self.budget.tick()
        key = (id(node), ctx.env)
        if key in self.budget.active:
            self.cuts.append(key)
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
        handler: Any = _EXPRESSIONS.get(type(node).__name__)
        if handler is not None:
            values = handler(self, node, ctx)
            if values is not None:
                return values
        return [Unknown(type(node).__name__)]

    def ev_constant(self, node: ast.Constant, ctx: Ctx) -> list[Value]:
        m = ctx.module
        return [Const(node.value, Origin(m.span(node), m.segment(node), m.path))]

    def ev_ifexp(self, node: ast.IfExp, ctx: Ctx) -> list[Value]:
        """``a if c else b``: ``a`` on the paths where ``c`` holds, ``b`` on the others."""
        out: list[Value] = []
        branches: dict[bool, list[Value]] = {}
        for outcome, path in self.truth(node.test, ctx):
            if outcome not in branches:
                branches[outcome] = self.ev(node.body if outcome else node.orelse, ctx)
            out += paths.restrict(branches[outcome], path)
        return out

    def ev_boolop(self, node: ast.BoolOp, ctx: Ctx) -> list[Value]:
        """``a or b`` (``a and b``): each operand's alternatives on the paths where the operands
        before it were false (true); an operand that stops the chain is its value."""
        stops_on = isinstance(node.op, ast.Or)
        pending: list[frozenset] = [paths.EMPTY]
        out: list[Value] = []
        for i, operand in enumerate(node.values):
            last = i == len(node.values) - 1
            nxt: list[frozenset] = []
            for v in self.ev(operand, ctx):
                for p in pending:
                    x = paths.extended(v, p)
                    if x is None:
                        continue
                    t = None if last else conditions.truthiness(x)
                    if last or t == stops_on:
                        out.append(x)
                    elif t is None:
                        out += paths.restrict([x], frozenset({(conditions.decision(operand, ctx), stops_on)}))
                        nxt.append(
                            paths.merge(
                                paths.path_of(x), frozenset({(conditions.decision(operand, ctx), not stops_on)})
                            )
                            or paths.EMPTY
                        )
                    else:
                        nxt.append(paths.path_of(x))
            pending = list(dict.fromkeys(nxt))
            if not pending:
                break
        return out

    def conditions(self, m: ModuleInfo, stmt: ast.AST | None) -> tuple:
        """The tests ``stmt`` is reached under (:func:`conditions.conditions_of`), once per
        statement."""
        if stmt is None:
            return ()
        known = self._conditions.get(id(stmt))
        if known is None or known[0] is not stmt:
            known = self._conditions[id(stmt)] = (stmt, conditions.conditions_of(m, stmt))
        return known[1]

    def truth(self, test: ast.AST, ctx: Ctx) -> list:
        """:func:`conditions.truth`, once per test and bound arguments: the guards of a function
        are asked at every binding its names reach."""
        key = (id(test), id(ctx.env))
        known = self._truths.get(key)
        if known is not None and known[0] is test and known[1] is ctx.env:
            return known[2]
        outcomes = conditions.truth(self, test, ctx)
        self._truths[key] = (test, ctx.env, outcomes)
        return outcomes

    def reached(self, values: list[Value], stmt: ast.AST | None, ctx: Ctx) -> list[Value]:
        """The alternatives that can reach ``stmt``, on the paths they do."""
        conds = self.conditions(ctx.module, stmt)
        return conditions.constrained(self, values, conds, ctx) if conds else values

    def ev_sequence(self, node: ast.List | ast.Tuple, ctx: Ctx) -> list[Value]:
        if any(isinstance(e, ast.Starred) for e in node.elts):
            return [UNKNOWN]
        return [Seq(len(node.elts), tuple(node.elts), ctx, fixed=isinstance(node, ast.Tuple))]

    def ev_binop(self, node: ast.BinOp, ctx: Ctx) -> list[Value] | None:
        """``a + b`` of strings (:func:`_concatenated`), and arithmetic on known numbers
        (``devices * num_nodes``), each result on the paths of its operands."""
        op = _ARITHMETIC.get(type(node.op))
        if op is None:
            return None
        lefts, rights = self.ev(node.left, ctx), self.ev(node.right, ctx)
        o = Origin(ctx.module.span(node), ctx.module.segment(node), ctx.module.path)
        if isinstance(node.op, ast.Add) and not all(_is_number(v) for v in (*lefts, *rights)):
            return _concatenated(lefts, rights, o)
        out: list[Value] = []
        for a in lefts:
            for b in rights:
                p = paths.merge(paths.path_of(a), paths.path_of(b))
                if p is None:
                    continue
                value = _apply(op, a, b)
                out.append(
                    paths.extended(Const(value, o) if value is not None else Unknown("expression"), p) or UNKNOWN
                )
        return out[:MAX_ALTERNATIVES] or [Unknown("expression")]

    def ev_unary(self, node: ast.UnaryOp, ctx: Ctx) -> list[Value] | None:
        operand = node.operand
        if (
            isinstance(node.op, ast.USub)
            and isinstance(operand, ast.Constant)
            and isinstance(operand.value, (int, float))
        ):
            m = ctx.module
            return [Const(-operand.value, Origin(m.span(node), m.segment(node), m.path))]
        return None

    def ev_subscript(self, node: ast.Subscript, ctx: Ctx) -> list[Value]:
        """``base[key]``: the entries a key can select, each on the path of that key (entries of
        a key not known: one decision per display, so two look-ups in it go together)."""
        key_vals = self.ev(node.slice, ctx)
        keys = key_vals if all(isinstance(k, Const) for k in key_vals) else None
        out: list[Value] = []
        for base in self.ev(node.value, ctx):
            if isinstance(base, DictVal):
                found = self._dict_entries(base, keys)
            elif isinstance(base, ArgNamespace):
                found = self._options(base, key_vals, ctx)
            elif isinstance(base, Seq):
                found = self._seq_items(base, keys, ctx)
            else:
                found = [Unknown("subscript")]
            out += paths.restrict(found, paths.path_of(base))
        return out or [Unknown("subscript")]

    def _dict_entries(self, base: DictVal, keys: list[Value] | None) -> list[Value]:
        out: list[Value] = []
        entries = list(zip(base.node.keys, base.node.values))
        for i, (k, v) in enumerate(entries):
            if k is None:
                out.append(Unknown("dict unpacking"))
            elif keys is None:
                out += paths.restrict(self.ev(v, base.ctx), frozenset({(("entry", id(base.node)), i)}))
            elif isinstance(k, ast.Constant):
                for key in keys:
                    if isinstance(key, Const) and key.value == k.value:
                        out += paths.restrict(self.ev(v, base.ctx), paths.path_of(key))
            else:
                out += self.ev(v, base.ctx)
        return out

    def _options(self, base: ArgNamespace, keys: list[Value], ctx: Ctx) -> list[Value]:
        """``vars(args)[key]``: the option named by each key, on that key's path."""
        out: list[Value] = []
        for key in keys:
            if not (isinstance(key, Const) and isinstance(key.value, str)):
                return [Unknown("an option named by a key not known")]
            out += paths.restrict(cli_sources.cli_option(self, base.module, key.value, ctx), paths.path_of(key))
        return out

    def _seq_items(self, base: Seq, keys: list[Value] | None, ctx: Ctx) -> list[Value]:
        items = list(base.items)
        out: list[Value] = []
        if keys is not None and all(
            isinstance(k, Const) and isinstance(k.value, int) and -len(items) <= k.value < len(items) for k in keys
        ):
            for key in keys:
                assert isinstance(key, Const) and isinstance(key.value, int)
                out += paths.restrict(self.ev(items[key.value], base.ctx or ctx), paths.path_of(key))
            return out
        for item in items:
            out += self.ev(item, base.ctx or ctx)
        return out

    # strings built from constants -----------------------------------------------------------
    def _const_strings(self, node: ast.AST, ctx: Ctx) -> list[tuple[str, frozenset]] | None:
        return _strings(self.ev(node, ctx))

    def ev_fstring(self, node: ast.JoinedStr, ctx: Ctx) -> list[Value]:
        parts: list[list[tuple[str, frozenset]]] = []
        for piece in node.values:
            if isinstance(piece, ast.Constant):
                parts.append([(str(piece.value), paths.EMPTY)])
            elif isinstance(piece, ast.FormattedValue) and piece.format_spec is None and piece.conversion in (-1, 115):
                strings = self._const_strings(piece.value, ctx)
                if strings is None:
                    return [Unknown("f-string")]
                parts.append(strings)
            else:
                return [Unknown("f-string")]
        results: list[tuple[str, frozenset]] = [("", paths.EMPTY)]
        for options in parts:
            results = _joined(results, options)[:MAX_ALTERNATIVES]
        o = Origin(ctx.module.span(node), ctx.module.segment(node), ctx.module.path)
        return [paths.extended(Const(r, o), p) or Const(r, o) for r, p in results]

    # names -----------------------------------------------------------------------------------
    def ev_name(self, name: str, node: ast.AST, ctx: Ctx) -> list[Value]:
        m = ctx.module
        scope = m.scope_of(node)
        stmt: Any = m.stmt_of(node)
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
        narrow: tuple = ()
        if crossed:
            body = scope.body if isinstance(scope.body, list) else [scope.body]
            bindings, definite = block_bindings(body, name)
        else:
            bindings, definite, narrow = self.reaching(name, stmt, scope, m)
        out: list[Value] = []
        for b in bindings:
            out += self.ev_binding(b, name, ctx)
        if not definite:
            # a path on which the name is unbound raises NameError before reaching the use: it
            # adds no alternative, unless the name is a parameter
            if isinstance(scope, (*FUNC_TYPES, ast.Lambda)):
                params = scope.args
                if name in {a.arg for a in (*params.posonlyargs, *params.args, *params.kwonlyargs)} or not bindings:
                    out += conditions.constrained(self, self.ev_param(scope, name, ctx), narrow, ctx, name)
            elif not bindings:
                out.append(Unknown(f"`{name}` is not defined here"))
        return out or [UNKNOWN]

    def _binds_in(self, cls: ast.ClassDef, name: str, m: ModuleInfo) -> bool:
        return any(stmt_bindings(s, name)[0] for s in cls.body)

    def _stmt_in(self, scope: ast.AST, stmt: ast.AST | None, m: ModuleInfo) -> bool:
        return stmt is not None and m.scope_of(stmt) is scope

    def ev_module_name(self, name: str, m: ModuleInfo, ctx: Ctx) -> list[Value]:
        if m.tree is None:
            return [UNKNOWN]
        bindings = m.module_bindings(name, block_bindings) + self._global_assignments(name, m)
        out: list[Value] = []
        for b in bindings:
            out += self.ev_binding(b, name, Ctx(m, (), ctx.depth))
        if not bindings:
            out.append(Unknown(f"`{name}` is not defined"))
        return out

    def _global_assignments(self, name: str, m: ModuleInfo) -> list[Binding]:
        """Assignments to ``name`` inside functions that declare ``global name``."""
        out: list[Binding] = []
        for func in m.global_declarers(name):
            for node in walk(func):
                if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for t in targets:
                        matched = match_target(t, node.value, name)
                        if matched is not None:
                            out.append(Binding("assign", node, t, matched))
        return out

    def reaching(
        self, name: str, stmt: ast.AST | None, scope: ast.AST, m: ModuleInfo
    ) -> tuple[list[Binding], bool, tuple]:
        """:meth:`_reaching`, walked once per use in a module version (a pure function of its
        tree): a later ask replays the walk's evaluation steps, one tick each, and the
        identifiers it looked up, so that budgets and dependencies come out as if it walked
        again."""
        key = (name, id(stmt), id(scope))
        known = m.reaching_walks.get(key)
        if known is not None and known[0] is stmt and known[1] is scope:
            _, _, found, definite, narrow, ticks, lookups = known
            if lookups and m.lookups is not None:
                for looked, kinds in lookups.items():
                    m.lookups.setdefault(looked, set()).update(kinds)
            tick = self.budget.tick
            for _ in range(ticks):
                tick()
            return list(found), definite, narrow
        outer = m.lookups
        inner: dict[str, set[str]] = {}
        budget = self.budget
        before = budget.steps
        m.lookups = inner
        try:
            found, definite, narrow = self._reaching(name, stmt, scope, m)
        finally:
            m.lookups = outer
            if outer is not None:
                for looked, kinds in inner.items():
                    outer.setdefault(looked, set()).update(kinds)
        if self.budget is budget:
            m.reaching_walks[key] = (stmt, scope, tuple(found), definite, narrow, budget.steps - before, inner)
        return found, definite, narrow

    def _reaching(
        self, name: str, stmt: ast.AST | None, scope: ast.AST, m: ModuleInfo
    ) -> tuple[list[Binding], bool, tuple]:
        """The bindings of ``name`` that reach ``stmt``, whether one surely does, and the tests
        the value from before them (a parameter) must pass to reach it. Each binding carries the
        tests its value must pass (``Binding.narrow``): the walk passed ``if x is None: x = 1``
        (the earlier ``x`` reaches the use only when it is not None), a guard on the name
        (``if x > 1: raise``), an enclosing ``if x:``."""
        found: list[Binding] = []
        narrow: list = []
        cur = stmt
        while cur is not None and cur is not scope:
            parent, block, idx = m.block_of(cur)
            if idx >= 0:
                if parent is m.tree:  # module level: only the statements that mention the name
                    block, idx = m.tops_before(name, cur)
                for prev in reversed(block[:idx]):
                    self.budget.tick()
                    b, definite = stmt_bindings(prev, name)
                    found.extend(_narrowed(b, narrow))
                    if definite:
                        return found, True, ()
                    _passed(prev, name, bool(b), narrow)
            if parent is None or parent is scope:
                break
            if isinstance(parent, ast.If) and _mentions(parent.test, name):
                narrow.append((parent.test, any(cur is s for s in parent.body)))
            # the header of the enclosing block may bind the name for its body
            if (
                isinstance(parent, (ast.For, ast.AsyncFor))
                and any(cur is x for x in parent.body)
                and binds(parent.target, name)
            ):
                kind = "for" if isinstance(parent.target, ast.Name) or _key_value_target(parent.target) else "unknown"
                found.append(Binding(kind, parent, parent.target, parent.iter, tuple(narrow)))
                return found, True, ()
            if isinstance(parent, (ast.With, ast.AsyncWith)):
                items = [i for i in parent.items if i.optional_vars is not None and binds(i.optional_vars, name)]
                if items:
                    found.append(Binding("unknown", parent, items[0].optional_vars))
                    return found, True, ()
            if isinstance(parent, ast.ExceptHandler) and parent.name == name:
                found.append(Binding("unknown", parent))
                return found, True, ()
            if isinstance(parent, ast.ExceptHandler) or type(parent).__name__ == "match_case":
                parent = m.parent_of(parent)
            cur = parent
        return found, False, tuple(narrow)

    def ev_binding(self, b: Binding, name: str, ctx: Ctx) -> list[Value]:
        """The values of one binding that reach the use: those on a path through the binding's
        own conditions, passing the tests the walk from the use passed (``b.narrow``)."""
        if self.asked_once is not None and b.kind in ("assign", "unpack", "for"):
            # every use of a local the binding reaches asks it again: asked once per analysis
            key = ("binding", id(b.node), name, b.narrow, ctx.module.path, ctx.env)
            about = (b.node, ctx.module) if not ctx.env else None
            return list(self.asked_once(key, lambda: self._reaching_values(b, name, ctx), about))
        return self._reaching_values(b, name, ctx)

    def _reaching_values(self, b: Binding, name: str, ctx: Ctx) -> list[Value]:
        values = self._ev_binding(b, name, ctx)
        if b.kind in ("assign", "unpack", "for", "annotation"):
            values = self.reached(values, b.node, ctx)
        return conditions.constrained(self, values, b.narrow, ctx, name) if b.narrow else values

    def _ev_binding(self, b: Binding, name: str, ctx: Ctx) -> list[Value]:
        m = ctx.module
        in_class = isinstance(m.parent_of(b.node), ast.ClassDef)
        if b.kind in ("assign", "annotation") and in_class and isinstance(b.node, ast.AnnAssign):
            # a class field with a Literal[...] type (dataclass configs filled from a CLI)
            literal = cli_sources.literal_values(self, b.node.annotation, ctx, f"field `{name}`")
            if literal is not None:  # one choice per field: every read of it takes the same value
                return paths.tagged(literal, ("literal field", id(b.node)))
        if b.kind == "assign":
            return with_step(self.ev(b.value, ctx), self.origin(b.node, m))
        if b.kind == "annotation":
            return self.annotated(b, name, ctx)
        if b.kind == "unpack":
            return self.unpacked(b, name, ctx)
        if b.kind == "for":
            out: list[Value] = []
            over_dict = _dict_iteration(b.target, b.value, name)
            if over_dict is not None:
                return self.dict_keys(b, over_dict, name, ctx)
            for seq in self.ev(b.value, ctx):
                if isinstance(seq, Seq) and seq.items and isinstance(b.target, ast.Name):
                    items = [paths.restrict(self.ev(item, seq.ctx or ctx), paths.path_of(seq)) for item in seq.items]
                    out += [
                        v
                        for i, vs in enumerate(items)
                        for v in paths.restrict(vs, frozenset({(("for", id(b.node)), i)}))
                    ]
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

    def dict_keys(self, b: Binding, mapping: ast.expr, name: str, ctx: Ctx) -> list[Value]:
        """``for k in d.keys()`` / ``for k, v in d.items()``: the keys of the dict display(s)
        ``d`` evaluates to, one loop iteration each; unknown where a key is not a literal or ``d``
        is not a dict display (the loop's value variable is not followed)."""
        out: list[Value] = []
        for d in self.ev(mapping, ctx):
            keys = d.node.keys if isinstance(d, DictVal) else None
            if not keys or any(not (isinstance(k, ast.Constant) and isinstance(k.value, str)) for k in keys):
                out.append(Unknown(f"loop variable `{name}`"))
                continue
            for i, k in enumerate(keys):
                const = Const(k.value, Origin(d.ctx.module.span(k), short(d.ctx.module.segment(k)), d.ctx.module.path))
                out += paths.restrict([const], paths.path_of(d) | frozenset({(("for", id(b.node)), i)}))
        return out

    def annotated(self, b: Binding, name: str, ctx: Ctx) -> list[Value]:
        """A name only annotated (``fabric: Fabric`` in a class body): a Fabric of unknown
        configuration when the annotation is Fabric's class."""
        annotation = getattr(b.node, "annotation", None)
        if (
            annotation is not None
            and not isinstance(annotation, ast.Constant)
            and any(fabric_args.is_fabric_class(self, v) for v in self.ev(annotation, Ctx(ctx.module, (), ctx.depth)))
        ):
            return [FabricInst((StrategyChoice(None, f"`{name}` annotated as a `Fabric`", "?"),), None)]
        if annotation is not None and any(
            fabric_args.is_trainer_class(self, v) for v in self.ev(annotation, Ctx(ctx.module, (), ctx.depth))
        ):
            return [TrainerInst(None)]
        return [Unknown(f"`{name}` is only annotated")]

    def unpacked(self, b: Binding, name: str, ctx: Ctx) -> list[Value]:
        """``a, b = value``: the item of ``value`` at ``name``'s place."""
        target = b.target
        assert isinstance(target, (ast.Tuple, ast.List)) and b.value is not None
        index = next(i for i, t in enumerate(target.elts) if isinstance(t, ast.Name) and t.id == name)
        out: list[Value] = []
        for v in self.ev(b.value, ctx):
            if isinstance(v, ValueTuple) and len(v.values) == len(target.elts):
                out.append(v.values[index])
            elif isinstance(v, Seq) and v.ctx is not None and len(v.items) == len(target.elts):
                out += self.ev(v.items[index], v.ctx)
            else:
                out.append(Unknown(f"`{name}` unpacked"))
        return with_step(out, self.origin(b.node, ctx.module))

    def origin(self, node: ast.AST, m: ModuleInfo) -> Origin:
        return Origin(m.span(node), short(m.segment(node)), m.path)

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
        if self.asked_once is not None:
            # the same for every use of the parameter: asked once per analysis
            key = ("param", id(func), name)
            return list(self.asked_once(key, lambda: self._unbound_param(func, name, ctx), (func, ctx.module)))
        return self._unbound_param(func, name, ctx)

    def _unbound_param(self, func: ast.AST, name: str, ctx: Ctx) -> list[Value]:
        """A parameter not bound by the call being evaluated: the values its call sites pass."""
        m = ctx.module
        cls = m.enclosing_class(func)
        is_method = cls is not None and not decorated_with(func, "staticmethod")
        receiver = method_receiver(func) if cls is not None else None
        if receiver is not None and receiver[0] == name:
            if receiver[1]:  # a classmethod's class
                return [ClassRef(cls, m)]
            ref = ClassRef(cls, m)
            if fabric_args.is_fabric_class(self, ref):
                return self.self_fabric(ref, ctx)
            return self.self_instances(ref)
        out: list[Value] = []
        sites = list(calls.call_sites(self, func, m, is_method, cls))
        complete = calls.all_followed(self, func, m, is_method, cls)
        for i, (site_args, site_ctx, site_call) in enumerate(sites):
            expr = site_args.get(name, MISSING)
            if expr is MISSING:
                found = self._param_default(func, name, ctx) or [Unknown("argument not passed")]
            elif expr is None:
                found = [Unknown("argument unpacked")]
            else:
                found = with_step(self.ev(expr, site_ctx), self.origin(site_call, m))
            # one call site fills every parameter: its values go together
            out += paths.restrict(found, frozenset({(("call", id(func)), i)})) if len(sites) > 1 else found
        if not sites or not complete or calls.escapes(self, func, m) or _hides_callers(func):
            # a decorated function (click, hydra …), one passed around, or one called from more
            # modules than are followed is called with values its own module does not show
            choices = cli_sources.param_choices(self, func, name, ctx)
            if choices is not None:
                return out + paths.tagged(choices, ("choices", id(func), name))
            default = self._param_default(func, name, ctx)
            annotated = self._param_annotation(func, name, ctx)
            # a caller not in view sets each parameter on its own: the default, or anything
            out += annotated
            if default:
                free = Unknown(f"parameter `{name}` filled by a caller not in view")
                out += paths.tagged([*default, free], ("param", id(func), name))
            if not out:
                out.append(Unknown(f"parameter `{name}`"))
        return out

    def self_fabric(self, ref: ClassRef, ctx: Ctx) -> list[Value]:
        """``self`` in a method of a ``Fabric`` subclass: the Fabrics its constructions build (a
        subclass of it, built elsewhere, may be ``self`` too); with no construction in view,
        the arguments its ``__init__`` passes on, from a caller not seen."""
        out: list[Value] = []
        for klass in [ref, *self.subclasses(ref)]:
            for call, call_ctx in calls.constructions(self, klass):
                out += self.call_value(klass, call, call_ctx)
        if out:
            return out
        unseen = ast.Call(func=ast.Name(ref.name, ast.Load()), args=[], keywords=[])
        origin = self.origin(ref.node, ref.module)
        return fabric_args.fabric_instances(self, unseen, Ctx(ref.module, (), ctx.depth), origin, ref)

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
                    if fabric_args.is_fabric_class(self, v):
                        return [FabricInst((StrategyChoice(None, "a `Fabric` parameter", "?"),), None)]
                    if fabric_args.is_trainer_class(self, v):
                        return [TrainerInst(None)]  # known by its type only
                    if isinstance(v, ClassRef):  # a config class (hydra, a CLI): its defaults, or anything
                        return [cli_sources.filled(v, f"the caller of `{func.name}`")]
        return []

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
            if self.workspace is not None and base.module.name and not self._module_binds(base.module, attr):
                sub = self.workspace.load_module_named(f"{base.module.name}.{attr}", base.module)
            if sub is not None:
                return [ModuleRef(sub)]
            return self.ev_module_name(attr, base.module, ctx)
        if isinstance(base, Instance):
            return self.instance_attribute(base, attr, ctx)
        if isinstance(base, ClassRef):
            return self.class_attribute(base, attr, ctx)
        if isinstance(base, ArgNamespace):
            return cli_sources.cli_option(self, base.module, attr, ctx)
        if isinstance(base, LightningCLIInst):
            return lightning_cli.attribute(base, attr)
        if isinstance(base, FabricInst) and attr in ("strategy", "_strategy"):
            return [Unknown("strategy of a Fabric")]
        return [Unknown(f"attribute `{attr}`")]

    def _module_binds(self, module: ModuleInfo, name: str) -> bool:
        return module.tree is not None and bool(block_bindings(module.tops_with(name, "binding"), name)[0])

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
        """``inst.attr``: a method (and its overrides, for ``self``), else what the methods assign
        to ``self.attr``, else the class-level binding — in the first class of the MRO that has one."""
        for klass in self.mro(inst.cls):
            found = self._method(klass, attr, inst)
            if not found:
                found = self._assigned(klass, inst, attr, ctx)
            if not found:
                found = self._field(klass, inst, attr, ctx)
            if found:
                return found
        forwarded = self._forwarding(inst, ctx)
        if forwarded is not None:
            return [a for v in forwarded for a in self.attribute_of(v, attr, ctx)] or [UNKNOWN]
        return [Unknown(f"attribute `{attr}`")]

    def forward_target(self, inst: Instance, attr: str, ctx: Ctx) -> list[Value] | None:
        """What ``inst.attr`` is looked up on when ``inst``'s class has no ``attr`` of its own and
        its ``__getattr__`` forwards every name to an attribute (``return getattr(self.fabric,
        name)``): the values of that attribute; None when it does not forward."""
        for klass in self.mro(inst.cls):
            if (
                self._method(klass, attr, inst)
                or self._assigned(klass, inst, attr, ctx)
                or self._field(klass, inst, attr, ctx)
            ):
                return None
        return self._forwarding(inst, ctx)

    def _forwarding(self, inst: Instance, ctx: Ctx) -> list[Value] | None:
        """The values of the attribute ``inst``'s ``__getattr__`` forwards every name to; None when
        it does not, or when a base class is not analysed (it may define the name itself)."""
        classes = self.mro(inst.cls)
        if any(not self._bases_seen(klass) for klass in classes):
            return None
        for klass in classes:
            target = next(
                (forwarded_to(f) for f in klass.node.body if isinstance(f, FUNC_TYPES) and f.name == "__getattr__"),
                MISSING,
            )
            if target is not MISSING:
                return None if target is None else self.instance_attribute(inst, target, ctx)
        return None

    def _bases_seen(self, klass: ClassRef) -> bool:
        """Every base of ``klass`` is a class of analysed source (or ``object``)."""
        for base in klass.node.bases:
            if isinstance(base, ast.Name) and base.id == "object":
                continue
            if not all(isinstance(v, ClassRef) for v in self.ev(base, Ctx(klass.module))):
                return False
        return True

    def _field(self, klass: ClassRef, inst: Instance, attr: str, ctx: Ctx) -> list[Value]:
        """A class-level binding of ``attr``; for an instance filled from outside (a command
        line), the default and whatever that source may set, unless the type is a ``Literal``."""
        found: list[Value] = []
        fctx = Ctx(klass.module, (), ctx.depth)
        for b in block_bindings(klass.node.body, attr)[0]:
            found += self.ev_binding(b, attr, fctx)
            annotation = getattr(b.node, "annotation", None)
            if inst.filled and cli_sources.literal_values(self, annotation, fctx, attr) is None:
                found.append(Unknown(f"`{attr}` as set by {inst.filled}"))
        return found

    def _method(self, klass: ClassRef, attr: str, inst: Instance) -> list[Value]:
        for item in klass.node.body:
            if isinstance(item, FUNC_TYPES) and item.name == attr:
                found: list[Value] = [FuncRef(item, klass.module, bound_self=inst)]
                if inst.call is None and not calls.all_users_followed(self, klass.name, klass.module):
                    found.append(
                        Unknown(f"`{attr}` of a subclass of `{klass.name}` (used by more modules than are followed)")
                    )
                elif inst.call is None:  # `self`: a subclass may override the method
                    for sub in self.subclasses(klass):
                        found += [
                            FuncRef(o, sub.module, bound_self=inst)
                            for o in sub.node.body
                            if isinstance(o, FUNC_TYPES) and o.name == attr
                        ]
                return found
        return []

    def _assigned(self, klass: ClassRef, inst: Instance, attr: str, ctx: Ctx) -> list[Value]:
        """What the methods of ``klass`` assign to ``self.attr``."""
        out: list[Value] = []
        m = klass.module
        for item in klass.node.body:
            params = item.args.posonlyargs + item.args.args if isinstance(item, FUNC_TYPES) else []
            if not params:
                continue
            env = ctx.env
            if inst.call is not None and inst.ctx is not None and item.name == "__init__":
                env = calls.bind_call(self, item, inst.call, inst.ctx, skip=1) + env
            for node, target, value in m.attribute_assignments(item).get(attr, ()):
                expr = attr_target_value(target, value, params[0].arg, attr)
                if expr is None:
                    out.append(Unknown(f"`self.{attr}` unpacked"))
                elif expr is not MISSING:
                    out += with_step(self.ev(expr, Ctx(m, env, ctx.depth)), self.origin(node, m))
        return out

    def subclasses(self, cls: ClassRef) -> list[ClassRef]:
        """Classes deriving (at any depth) from ``cls``: in its module and in the other modules
        of the workspace that mention its name (asked once per analysis)."""
        if self.asked_once is None:
            return self._subclasses(cls)
        return list(
            self.asked_once(("subclasses", id(cls.node)), lambda: self._subclasses(cls), (cls.node, cls.module))
        )

    def _subclasses(self, cls: ClassRef) -> list[ClassRef]:
        modules = [cls.module]
        if self.workspace is not None and cls.module.path:
            modules += self.workspace.modules_mentioning(cls.name, exclude=cls.module.path, importing=cls.module.path)
        out: list[ClassRef] = []
        for m in modules:
            for node in m.classes():
                if node is cls.node or not node.bases:
                    continue
                ref = ClassRef(node, m)
                if any(calls.is_def(self, k, cls.node, cls.module) for k in self.mro(ref)[1:]):
                    out.append(ref)
        return out

    def self_instances(self, ref: ClassRef) -> list[Value]:
        """``self`` in a method of ``ref``: an instance of each class of its hierarchy that the
        code builds (``DeepSpeedTrainer()`` makes ``self._setup_strategy()`` the override), when
        every class of the hierarchy is only ever called; else any of them, as for a class more
        modules may use than are followed (an API: :data:`~calls.MAX_CALLER_MODULES`)."""
        if self.workspace is not None and ref.module.path and not calls.all_users_followed(self, ref.name, ref.module):
            return [Instance(ref)]
        hierarchy = [ref, *self.subclasses(ref)]
        if any(calls.class_escapes(self, k) for k in hierarchy):
            return [Instance(ref)]
        built: list[Value] = []
        for klass in hierarchy:
            built += [Instance(klass, call, ctx) for call, ctx in calls.constructions(self, klass)]
        return built or [Instance(ref)]

    def mro(self, cls: ClassRef) -> list[ClassRef]:
        """``cls`` and the classes of analysed source it derives from, nearest first (at most
        16; asked once per analysis)."""
        if self.asked_once is None:
            return self._mro(cls)
        return list(self.asked_once(("mro", id(cls.node)), lambda: self._mro(cls), (cls.node, cls.module)))

    def _mro(self, cls: ClassRef) -> list[ClassRef]:
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
        if isinstance(func, ast.Attribute) and func.attr == "parse_args_into_dataclasses":
            parsers = [v for v in self.ev(func.value, ctx) if isinstance(v, DataclassParser)]
            if parsers:
                return cli_sources.parsed_dataclasses(parsers[0])
        if isinstance(func, ast.Attribute) and func.attr in ("parse_args", "parse_known_args", "parse_object"):
            arg_parsers = [v for v in self.ev(func.value, ctx) if isinstance(v, ArgParser)]
            if arg_parsers:
                ns = ArgNamespace(arg_parsers[0].module)
                return [Seq(2, (), ctx), ns] if func.attr == "parse_known_args" else [ns]
        if isinstance(func, ast.Attribute) and func.attr == "get" and node.args:
            namespaces = [v for v in self.ev(func.value, ctx) if isinstance(v, ArgNamespace)]
            if namespaces:  # `vars(args).get("key", default)`
                return self._options(namespaces[0], self.ev(node.args[0], ctx), ctx)
        out: list[Value] = []
        callees = self.ev(func, ctx)
        if (
            isinstance(func, ast.Name)
            and func.id == "vars"
            and len(node.args) == 1
            and all(isinstance(c, Unknown) for c in callees)
        ):
            # the builtin: a parsed namespace's options as a mapping
            return [v if isinstance(v, ArgNamespace) else Unknown("`vars(...)`") for v in self.ev(node.args[0], ctx)]
        if isinstance(func, ast.Name) and func.id == "dict" and all(isinstance(c, Unknown) for c in callees):
            return [KwargsVal(node, ctx)]  # the builtin: a mapping whose entries are known
        if (
            isinstance(func, ast.Name)
            and func.id in _COLLECTIONS
            and len(node.args) == 1
            and all(isinstance(c, Unknown) for c in callees)
        ):
            return [v for v in self.ev(node.args[0], ctx) if isinstance(v, Seq)] or [UNKNOWN]  # frozenset({...})
        for callee in callees:
            out += self.call_value(callee, node, ctx)
        if not out and any(isinstance(c, FuncRef) for c in callees):
            return []  # every callee raises
        return out or [UNKNOWN]

    def call_value(self, callee: Value, node: ast.Call, ctx: Ctx) -> list[Value]:
        m = ctx.module
        origin = Origin(m.span(node), short(m.segment(node)), m.path)
        if isinstance(callee, QualRef):
            return self.qualname_call(callee.qualname, node, ctx, origin)
        if isinstance(callee, ClassRef):
            return self.class_call(callee, node, ctx, origin)
        if isinstance(callee, FuncRef):
            return self.call_function(callee, node, ctx)
        if isinstance(callee, PartialVal):
            return self.call_partial(callee, node, ctx, origin)
        return [Unknown("call")]

    def qualname_call(self, q: str, node: ast.Call, ctx: Ctx, origin: Origin) -> list[Value]:
        """A call of something known by its qualified name: Lightning's classes, the command-line
        and environment sources, ``functools.partial``."""
        if facts.is_fabric_class(q):
            if self.asked_once is None or ctx.env:
                return fabric_args.fabric_instances(self, node, ctx, origin)
            # a construction outside any call's bound arguments is the same Fabric for every
            # receiver that reaches it: its configurations are worked out once per analysis (an
            # evaluation that reaches the depth limit raises, and leaves nothing remembered)
            key = ("fabric_instances", id(node))
            return list(
                self.asked_once(key, lambda: fabric_args.fabric_instances(self, node, ctx, origin), (node, ctx.module))
            )
        pytorch = facts.pytorch_class(q)
        if pytorch == facts.TRAINER_CLASS:
            return fabric_args.trainer_instances(self, node, ctx, origin)
        if pytorch == facts.LIGHTNING_CLI_CLASS:
            return [lightning_cli.cli_instance(self, node, ctx, origin)]
        kind = facts.strategy_kind_of_class(q)
        trainer_kind = facts.trainer_strategy_kind(q)
        if kind is not None or trainer_kind is not None:
            name = q.rsplit(".", 1)[-1]
            return [
                StrategyInst(kind or trainer_kind, name, origin, call=node, ctx=ctx, base=name, trainer=kind is None)
            ]
        if facts.is_xla_accelerator_class(q):
            return [AcceleratorInst(True, origin, "XLAAccelerator", "XLAAccelerator")]
        if q.startswith("lightning.fabric.accelerators."):
            name = q.rsplit(".", 1)[-1]
            return [AcceleratorInst(False, origin, name, name)]
        if q == "functools.partial" and node.args:
            return [PartialVal(tuple(self.ev(node.args[0], ctx)), node, ctx)]
        sourced = cli_sources.call_value(self, q, node, ctx)
        if sourced is not None:
            return sourced
        if q.startswith(facts.FOREIGN_PREFIXES):
            return [Unknown(f"`{q}` is not one of Fabric's classes")]
        return [Unknown(f"call of `{q}`")]

    def class_call(self, callee: ClassRef, node: ast.Call, ctx: Ctx, origin: Origin) -> list[Value]:
        """A call of a class of analysed source: a subclass of one of Lightning's classes, or an
        instance to follow attributes of."""
        pytorch = fabric_args.pytorch_base(self, callee)
        if pytorch == facts.TRAINER_CLASS:
            return fabric_args.trainer_instances(self, node, ctx, origin, callee)
        if pytorch == facts.LIGHTNING_CLI_CLASS:
            return [lightning_cli.cli_instance(self, node, ctx, origin)]
        lineage = fabric_args.lightning_base(self, callee)
        if lineage is not None:
            if facts.is_fabric_class(lineage):
                return fabric_args.fabric_instances(self, node, ctx, origin, callee)
            kind = facts.strategy_kind_of_class(lineage)
            if kind is not None:
                return [StrategyInst(kind, callee.name, origin, call=node, ctx=ctx, base=lineage.rsplit(".", 1)[-1])]
            if facts.is_xla_accelerator_class(lineage):
                return [AcceleratorInst(True, origin, callee.name, "XLAAccelerator")]
        return [Instance(callee, node, ctx)]

    def call_partial(self, partial: PartialVal, node: ast.Call, ctx: Ctx, origin: Origin) -> list[Value]:
        """``partial(f, **bound)(**more)``: a Fabric class gets both sets of keywords (the call's
        win); any other callee is called with the call's arguments."""
        out: list[Value] = []
        for func in partial.funcs:
            build = (
                fabric_args.fabric_instances
                if fabric_args.is_fabric_class(self, func)
                else fabric_args.trainer_instances
                if fabric_args.is_trainer_class(self, func)
                else None
            )
            if build is not None:
                cls = func if isinstance(func, ClassRef) else None
                for bound in fabric_args.keyword_sets(self, list(partial.node.keywords), partial.ctx):
                    out += build(self, node, ctx, origin, cls, base=bound)
            else:
                out += self.call_value(func, node, ctx)
        return out

    def call_function(self, callee: FuncRef, node: ast.Call, ctx: Ctx) -> list[Value]:
        func = callee.node
        if isinstance(func, ast.Lambda):
            return self.ev(func.body, Ctx(callee.module, (), ctx.depth))
        calling = ("calling", id(func))
        if calling in self.budget.active:
            # a recursive call: its arguments differ at every level, so the guard on each
            # evaluation would not stop it before the budget does
            self.cuts.append(calling)
            return [Unknown(f"recursive call of `{func.name}`")]
        self.budget.active.add(calling)
        try:
            return self._call_function(callee, func, node, ctx)
        finally:
            self.budget.active.discard(calling)

    def _call_function(self, callee: FuncRef, func: ast.AST, node: ast.Call, ctx: Ctx) -> list[Value]:
        skip = 1 if callee.bound_self is not None else 0
        env = (calls.bind_call(self, func, node, ctx, skip=skip) + ctx.env)[:MAX_ENV]
        fctx = Ctx(callee.module, env, ctx.depth)
        out: list[Value] = []
        returns = list(returns_of(func))
        for ret in returns:
            found = (
                [Const(None)]
                if ret.value is None
                else with_step(self.ev(ret.value, fctx), self.origin(ret, callee.module))
            )
            out += self.reached(found, ret, fctx)
        if not returns and func.body and isinstance(func.body[-1], ast.Raise):
            return []  # always raises (an abstract method): no value reaches the caller
        if returns and not out:
            return [Unknown(f"no return of `{getattr(func, 'name', 'lambda')}` is reached")]
        if all(isinstance(v, Unknown) for v in out) and self.returns_fabric(func, callee.module, ctx):
            return [FabricInst((StrategyChoice(None, f"returned by `{func.name}` (annotated `Fabric`)", "?"),), None)]
        return out or [Const(None)]

    def returns_fabric(self, func: ast.AST, m: ModuleInfo, ctx: Ctx) -> bool:
        """Whether ``func`` is annotated to return a Lightning ``Fabric``."""
        ann = getattr(func, "returns", None)
        if ann is None or isinstance(ann, ast.Constant):
            return False
        return any(fabric_args.is_fabric_class(self, v) for v in self.ev(ann, Ctx(m, (), ctx.depth)))

    # Fabric(...) → strategy choices ----------------------------------------------------------


#: arithmetic the evaluator folds on known numbers
_ARITHMETIC: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Div: operator.truediv,
}


def _strings(values: list[Value]) -> list[tuple[str, frozenset]] | None:
    """Each alternative as a string with its path, when every one is a string or int constant."""
    out = []
    for v in values:
        if not (isinstance(v, Const) and isinstance(v.value, (str, int)) and not isinstance(v.value, bool)):
            return None
        out.append((str(v.value), paths.path_of(v)))
    return out


def _concatenated(lefts: list[Value], rights: list[Value], o: Origin) -> list[Value]:
    """``a + b`` of strings built from constants (``"deepspeed_stage_" + stage``)."""
    left, right = _strings(lefts), _strings(rights)
    if left is None or right is None:
        return [Unknown("expression")]
    out: list[Value] = [paths.extended(Const(r, o), p) or Const(r, o) for r, p in _joined(left, right)]
    return out[:MAX_ALTERNATIVES]


def _is_number(v: Value) -> bool:
    return isinstance(v, Const) and isinstance(v.value, (int, float)) and not isinstance(v.value, bool)


def _apply(op: Callable[[Any, Any], Any], a: Value, b: Value) -> Any:
    if not (_is_number(a) and _is_number(b)):
        return None
    assert isinstance(a, Const) and isinstance(b, Const)
    try:
        return op(a.value, b.value)
    except (ArithmeticError, ValueError):
        return None


def _joined(left: list[tuple[str, frozenset]], right: list[tuple[str, frozenset]]) -> list[tuple[str, frozenset]]:
    """Every concatenation of a left and a right string whose paths agree."""
    out = []
    for a, pa in left:
        for b, pb in right:
            p = paths.merge(pa, pb)
            if p is not None:
                out.append((a + b, p))
    return out


def _mentions(test: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(test))


def _narrowed(found: list[Binding], narrow: list) -> list[Binding]:
    return [dataclasses.replace(b, narrow=tuple(narrow)) for b in found] if narrow else found


def _passed(stmt: ast.stmt, name: str, binds_some: bool, narrow: list) -> None:
    """What passing ``stmt`` (walking back from a use) says of the earlier value of ``name``:
    ``if c: name = …`` (c is false where the earlier value reaches the use), a guard on it."""
    if binds_some:
        if isinstance(stmt, ast.If) and _mentions(stmt.test, name):
            in_body = bool(block_bindings(stmt.body, name)[0])
            in_else = bool(block_bindings(stmt.orelse, name)[0])
            if in_body != in_else and block_bindings(stmt.body if in_body else stmt.orelse, name)[1]:
                narrow.append((stmt.test, not in_body))
        return
    g = conditions.guard(stmt)
    if g is not None and _mentions(g[0], name):
        narrow.append(g)


#: builtins that build a collection of their argument's items (``frozenset({"deepspeed", "xla"})``)
_COLLECTIONS = frozenset({"frozenset", "set", "tuple", "list"})

#: expression type name → how the evaluator evaluates it (None from a handler: not understood)
_EXPRESSIONS = {
    "Constant": Inference.ev_constant,
    "Name": lambda ev, node, ctx: ev.ev_name(node.id, node, ctx),
    "Attribute": Inference.ev_attribute,
    "Call": Inference.ev_call,
    "IfExp": Inference.ev_ifexp,
    "BoolOp": Inference.ev_boolop,
    "List": Inference.ev_sequence,
    "Set": Inference.ev_sequence,
    "Tuple": Inference.ev_sequence,
    "JoinedStr": Inference.ev_fstring,
    "BinOp": Inference.ev_binop,
    "NamedExpr": lambda ev, node, ctx: ev.ev(node.value, ctx),
    "Dict": lambda ev, node, ctx: [DictVal(node, ctx)],
    "Subscript": Inference.ev_subscript,
    "UnaryOp": Inference.ev_unary,
}


#: the expressions every value of which :meth:`Inference.ev` gives is plain (a constant, a number, a
#: string, or a value not known; never a function, class, module or object whose attributes it
#: follows): constants, f-strings and arithmetic (:meth:`Inference.ev_fstring`,
#: :meth:`Inference.ev_binop`, :meth:`Inference.ev_unary`) and comparisons (not evaluated)
PLAIN_EXPRESSIONS = (ast.Constant, ast.JoinedStr, ast.BinOp, ast.UnaryOp, ast.Compare)


def is_plain(node: ast.AST, module: ModuleInfo) -> bool:
    """Whether every value :meth:`Inference.ev` gives ``node`` is plain, read from the syntax alone
    (nothing is evaluated): a :data:`PLAIN_EXPRESSIONS` expression, or a name read in the function
    that binds it only by ``name = <plain expression>`` (``path = root / name``). An attribute of a
    plain value is never known (:meth:`Inference.attribute_of`): ``path.exists`` is no Fabric, no
    ``torch.distributed`` function and no function to follow."""
    if isinstance(node, PLAIN_EXPRESSIONS):
        return True
    if not isinstance(node, ast.Name):
        return False
    scope = module.scope_of(node)
    return isinstance(scope, FUNC_TYPES) and node.id in _plain_locals(scope)


#: function → the names its own body binds only to plain expressions
_PLAIN_LOCALS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _plain_locals(func: ast.AST) -> frozenset[str]:
    found = _PLAIN_LOCALS.get(func)
    if found is None:
        found = _PLAIN_LOCALS[func] = _bound_only_to_plain(func)
    return found


def _bound_only_to_plain(func: ast.AST) -> frozenset[str]:
    """The names ``func`` binds, each only by ``name = <plain expression>`` (``a = b = ...`` too):
    no parameter, and a name bound any other way (a loop, ``with``, ``:=``, an augmented or
    annotated assignment, a tuple target, ``del``, an import, a definition, ``except``, a
    ``case`` capture, ``global``/``nonlocal``) is left out. Its nested functions are read too (an
    assignment expression in a default binds the name here): a name they bind otherwise only
    leaves it out, never lets it in."""
    args = func.args
    params = (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
    other = {a.arg for a in params if a is not None}
    plain_targets: set[int] = set()
    stored: list[ast.Name] = []
    for node in walk(func):
        if isinstance(node, ast.Assign) and isinstance(node.value, PLAIN_EXPRESSIONS):
            plain_targets.update(id(t) for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            stored.append(node)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            other.update(node.names)
        elif isinstance(node, ast.alias):
            other.add((node.asname or node.name).split(".")[0])
        else:  # a definition, an ``except`` clause, a ``case`` capture (``rest`` of a mapping)
            other.update(n for n in (getattr(node, "name", None), getattr(node, "rest", None)) if isinstance(n, str))
    other.update(n.id for n in stored if id(n) not in plain_targets)
    return frozenset(n.id for n in stored if n.id not in other)


def _key_value_target(target: ast.expr) -> bool:
    """``k, v`` (two names): a loop over ``d.items()`` binds the key to ``k``."""
    return isinstance(target, ast.Tuple) and len(target.elts) == 2 and all(isinstance(e, ast.Name) for e in target.elts)


def _dict_iteration(target: ast.expr, iterated: ast.expr | None, name: str) -> ast.expr | None:
    """The mapping whose keys ``name`` takes in ``for target in iterated``: ``d`` of ``for name in
    d.keys()`` or ``for name, _ in d.items()``; None otherwise (``for name in d`` is left to the
    sequence case: ``d`` may be a list)."""
    if not (
        isinstance(iterated, ast.Call)
        and isinstance(iterated.func, ast.Attribute)
        and not iterated.args
        and not iterated.keywords
    ):
        return None
    method = iterated.func.attr
    if method == "keys" and isinstance(target, ast.Name):
        return iterated.func.value
    if method == "items" and _key_value_target(target) and target.elts[0].id == name:
        return iterated.func.value
    return None


def _hides_callers(func: ast.AST) -> bool:
    """Whether a decorator of ``func`` may call it with values its call sites do not show (click,
    hydra …): any but those that call it with its own arguments (``@rank_zero_only``,
    ``@torch.no_grad()``)."""
    for deco in getattr(func, "decorator_list", ()):
        if last_name(deco.func if isinstance(deco, ast.Call) else deco) not in facts.CALL_THROUGH_DECORATORS:
            return True
    return False
