"""Set-up models: which Fabric's ``setup``/``setup_module`` call produced a model, and which
set-up models compute a tensor (a loss).

A tensor is *computed by* a set-up model when its expression — followed back through the
assignments of its own function — calls the model (``model(x)``, ``model.forward(x)``) or
hands the model to a helper (``compute_loss(model, batch)``). A model is *set up* when its
expression is bound (in the same function, at module level, to ``self.<attr>`` in any method of
the class, or through a parameter at the function's call sites) to the result of
``<fabric>.setup(...)`` or ``<fabric>.setup_module(...)`` whose receiver is a Lightning Fabric.
``model.module(x)`` bypasses the wrapper and is not a use of the set-up model.

Pure functions over the parsed modules and the evaluator (no pygls, no rule import).
"""

from __future__ import annotations

import ast
import weakref
from dataclasses import dataclass

from fabric_lsp import facts
from fabric_lsp.engine.python import calls
from fabric_lsp.engine.python.astwalk import CLAUSES, block_children, children
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.python.values import Ctx, FabricInst, Unknown
from fabric_lsp.engine.workspace.memo import AskedOnce
from fabric_lsp.engine.workspace.workspace import IMPORT_LINE, Workspace, setup_words_in

#: how far a tensor or a model is followed back (assignments, call sites)
MAX_DEPTH = 6

FUNC_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef)
#: tensor methods whose result autograd does not follow back
DETACHING_METHODS = frozenset({"detach", "item", "tolist", "numpy"})
#: context managers under which no graph is recorded
GRADLESS_CONTEXTS = frozenset({"no_grad", "inference_mode"})


@dataclass(frozen=True)
class SetupCall:
    """One ``<fabric>.setup(...)``/``setup_module(...)`` call on a Lightning Fabric."""

    call: ast.Call
    module: ModuleInfo
    fabrics: tuple[FabricInst, ...]
    #: the receiver may also be something that is not a Fabric
    unknown: bool

    @property
    def optimizers(self) -> int | None:
        """How many optimizers ``setup`` is given (None: unpacked, not countable)."""
        if self.call.func.attr != "setup":  # type: ignore[attr-defined]
            return 0
        if any(isinstance(a, ast.Starred) for a in self.call.args):
            return None
        return max(len(self.call.args) - 1, 0)


@dataclass(frozen=True)
class ModelUse:
    """A set-up model used to compute a tensor: ``use`` is the call that uses it (``model(x)``
    or ``helper(model, ...)``), in ``module``; ``expr`` is the model's expression there."""

    setup: SetupCall
    use: ast.Call
    expr: ast.expr
    module: ModuleInfo

    @property
    def direct(self) -> bool:
        return self.use.func is self.expr or (
            isinstance(self.use.func, ast.Attribute)
            and self.use.func.attr == "forward"
            and self.use.func.value is self.expr
        )


class Setups:
    """The set-up questions for one analysis (the evaluator and workspace of a SemanticModel)."""

    def __init__(self, inference, workspace: Workspace | None, asked_once: AskedOnce) -> None:
        self.inference = inference
        self.workspace = workspace
        self.asked_once = asked_once  # the analysis' memo
        self._reach: dict[int, bool] = {}
        #: (id(function), parameter, id(module)) → (function, the arguments its call sites pass)
        self._passed: dict[tuple[int, str, int], tuple[ast.AST, list[tuple[ast.AST | None, ModuleInfo]]]] = {}
        #: (id(function), parameter, id(module), depth) → (function, the setup calls found): helpers
        #: that hand a model on through several parameters reach each one along many call chains
        self._param_answers: dict[tuple[int, str, int, int], tuple[ast.AST, list[SetupCall]]] = {}

    # -- setup calls -----------------------------------------------------------------------
    def setup_call(self, node: ast.AST, m: ModuleInfo) -> SetupCall | None:
        """``node`` as a model setup call on a Lightning Fabric, or None."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            return None
        if node.func.attr not in facts.MODEL_SETUP_METHODS:
            return None
        return self.asked_once(("setup_call", id(node)), lambda: self._setup_call(node, m))

    def _setup_call(self, node: ast.Call, m: ModuleInfo) -> SetupCall | None:
        values = self.inference.evaluate(node.func.value, m)  # type: ignore[attr-defined]
        fabrics = tuple(v for v in values if isinstance(v, FabricInst))
        unknown = any(isinstance(v, Unknown) for v in values)
        return SetupCall(node, m, fabrics, unknown) if fabrics else None

    def setup_calls(self, m: ModuleInfo) -> list[SetupCall]:
        """Every model setup call on a Lightning Fabric in ``m``, in order."""
        out = []
        for name in facts.MODEL_SETUP_METHODS:
            for call in m.calls_by_name.get(name, []):
                found = self.setup_call(call, m)
                if found is not None:
                    out.append(found)
        return sorted(out, key=lambda s: (s.call.lineno, s.call.col_offset))

    def optimizer_setups(self, expr: ast.expr, m: ModuleInfo) -> list[ast.Call]:
        """The calls that set up the optimizer ``expr`` (a name) may be: a ``setup(model, opt)``
        whose result is unpacked with the name after the model (``model, opt = fabric.setup(...)``),
        or a ``setup_optimizers(opt)`` on a Lightning Fabric assigned to the name. Assignments
        in ``expr``'s own scope only (flow-insensitive)."""
        if not isinstance(expr, ast.Name):
            return []
        out: list[ast.Call] = []
        for value, first in assigned_values(m.scope_of(expr), expr.id, targets=True, m=m):
            if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
                continue
            joint = value.func.attr == "setup" and not first and self.setup_call(value, m) is not None
            if joint or (value.func.attr == "setup_optimizers" and first and self._on_fabric(value, m)):
                out.append(value)
        return out

    def _on_fabric(self, call: ast.Call, m: ModuleInfo) -> bool:
        values = self.inference.evaluate(call.func.value, m)  # type: ignore[attr-defined]
        return any(isinstance(v, FabricInst) for v in values)

    # -- whether set-up models can reach a module at all -------------------------------------
    def may_see_setups(self, m: ModuleInfo) -> bool:
        """Whether a set-up model can reach code of ``m``: ``m`` names a setup method or imports a
        module of the workspace (which may hand one over), or a module that (transitively) imports
        ``m`` names a setup method. A cheap text-level answer that spares a plain PyTorch module
        the search for the callers of its functions."""
        key = id(m)
        if key not in self._reach:
            self._reach[key] = self._reaches(m)
        return self._reach[key]

    def _reaches(self, m: ModuleInfo) -> bool:
        if self.workspace is None:
            return setup_words_in(m.text) or bool(IMPORT_LINE.search(m.text))
        return self.workspace.setups_may_reach(m.path, m.text)

    # -- which set-up models compute a tensor -----------------------------------------------
    def models_computing(self, expr: ast.expr, m: ModuleInfo) -> list[ModelUse]:
        """The set-up models whose outputs ``expr`` (a tensor) is computed from."""
        if not self.may_see_setups(m):
            return []
        out: list[ModelUse] = []
        self._tensor(expr, m, m.scope_of(expr), 0, set(), out)
        unique: dict[tuple[int, int], ModelUse] = {}
        for use in out:
            unique.setdefault((id(use.setup.call), id(use.use)), use)
        return list(unique.values())

    def _tensor(self, expr: ast.AST, m: ModuleInfo, scope: ast.AST, depth: int, seen: set, out: list[ModelUse]) -> None:
        if depth > MAX_DEPTH or id(expr) in seen:
            return
        seen.add(id(expr))
        for node in graph_nodes(expr):
            if isinstance(node, ast.Call):
                self._call_uses(node, m, scope, depth, out)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                for value in assigned_values(scope, node.id, grad_only=True, m=m):
                    self._tensor(value, m, scope, depth + 1, seen, out)

    def _call_uses(self, call: ast.Call, m: ModuleInfo, scope: ast.AST, depth: int, out: list[ModelUse]) -> None:
        if isinstance(call.func, ast.Attribute) and call.func.attr in facts.MODEL_SETUP_METHODS:
            return  # the setup call itself gives a model, not a tensor
        func = call.func
        callee = func.value if isinstance(func, ast.Attribute) and func.attr == "forward" else func
        candidates = [callee, *(a for a in call.args if not isinstance(a, ast.Starred))]
        candidates += [k.value for k in call.keywords if k.arg is not None]
        for cand in candidates:
            if isinstance(cand, (ast.Name, ast.Attribute)):
                for setup in self.models(cand, m, scope, depth):
                    out.append(ModelUse(setup, call, cand, m))

    # -- which setup calls a model expression comes from ------------------------------------
    def models(self, expr: ast.expr, m: ModuleInfo, scope: ast.AST | None = None, depth: int = 0) -> list[SetupCall]:
        """The setup calls whose model ``expr`` (a name or ``self.<attr>``) may be."""
        if depth > MAX_DEPTH or not self.may_see_setups(m):
            return []
        scope = m.scope_of(expr) if scope is None else scope
        if isinstance(expr, ast.Name):
            return self._name_models(expr.id, m, scope, depth)
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and isinstance(scope, FUNC_TYPES):
            cls = m.enclosing_class(scope)
            params = [*scope.args.posonlyargs, *scope.args.args]
            if cls is not None and params and params[0].arg == expr.value.id:
                return self._attr_models(cls, expr.attr, m)
        return []

    def _name_models(self, name: str, m: ModuleInfo, scope: ast.AST, depth: int) -> list[SetupCall]:
        values = assigned_values(scope, name, targets=True, m=m)
        out: list[SetupCall] = []
        for value, first in values:
            setup = self.setup_call(value, m) if first else None
            if setup is not None:
                out.append(setup)
            elif first and isinstance(value, (ast.Name, ast.Attribute)):
                out += self.models(value, m, scope, depth + 1)
        if values or not isinstance(scope, FUNC_TYPES):
            return out
        if is_param(scope, name):
            return self._param_models(scope, name, m, depth)
        if m.tree is None:
            return []
        return self._name_models(name, m, m.tree, depth + 1)  # a global read in a function

    def _param_models(self, func: ast.AST, name: str, m: ModuleInfo, depth: int) -> list[SetupCall]:
        key = (id(func), name, id(m), depth)
        found = self._param_answers.get(key)
        if found is None:
            out: list[SetupCall] = []
            for arg, where in self._passed_to(func, name, m):
                if isinstance(arg, (ast.Name, ast.Attribute)):
                    out += self.models(arg, where, None, depth + 1)
            found = self._param_answers[key] = (func, out)
        return list(found[1])

    def _passed_to(self, func: ast.AST, name: str, m: ModuleInfo) -> list[tuple[ast.AST | None, ModuleInfo]]:
        """What the call sites of ``func`` pass to its parameter ``name``, with their modules."""
        key = (id(func), name, id(m))
        found = self._passed.get(key)
        if found is None:
            cls = m.enclosing_class(func)
            sites: list[tuple[ast.AST | None, ModuleInfo]] = []

            def collect() -> None:  # where the budget runs out: the call sites found so far
                for site_args, site_ctx, _call in calls.call_sites(self.inference, func, m, cls is not None, cls):
                    sites.append((site_args.get(name), site_ctx.module))

            self.inference.bounded(collect, None)
            found = self._passed[key] = (func, sites)
        return found[1]

    def _attr_models(self, cls: ast.ClassDef, attr: str, m: ModuleInfo) -> list[SetupCall]:
        out: list[SetupCall] = []
        for node in m.walked(cls, _ASSIGNMENT_TYPES):
            if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if _binds_model(target, attr, self_attr=True):
                    setup = self.setup_call(node.value, m)
                    if setup is not None:
                        out.append(setup)
        return out


def _first_target(target: ast.AST) -> ast.AST:
    """The model's target of ``model, opt = fabric.setup(model, opt)``: the first element."""
    if isinstance(target, (ast.Tuple, ast.List)) and target.elts:
        return target.elts[0]
    return target


#: the statements :meth:`Setups._attr_models` reads
_ASSIGNMENT_TYPES = (ast.Assign, ast.AnnAssign)


def _binds_model(target: ast.AST, attr: str, self_attr: bool) -> bool:
    first = _first_target(target)
    if self_attr:
        return isinstance(first, ast.Attribute) and first.attr == attr and isinstance(first.value, ast.Name)
    return isinstance(first, ast.Name) and first.id == attr


def is_param(func: ast.AST, name: str) -> bool:
    args = func.args  # type: ignore[attr-defined]
    return any(a.arg == name for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))


def own_nodes(scope: ast.AST, grad_only: bool = False):
    """The nodes of ``scope``'s own body (not of nested functions or classes); with
    ``grad_only``, not the bodies of ``with torch.no_grad():``/``torch.inference_mode():``."""
    body = scope.body if isinstance(scope, (*FUNC_TYPES, ast.Module, ast.ClassDef)) else []
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (*FUNC_TYPES, ast.ClassDef, ast.Lambda)):
            continue  # a nested scope: its name is bound here, its body is not ours
        if (
            grad_only
            and isinstance(node, (ast.With, ast.AsyncWith))
            and any(_no_grad(i.context_expr) for i in node.items)
        ):
            continue
        stack.extend(reversed(children(node)))


def own_statements(scope: ast.AST, grad_only: bool = False):
    """The statements among :func:`own_nodes`, in its order (a compound statement before the
    statements of its blocks, the blocks in the order of its fields), without walking a single
    expression."""
    body = scope.body if isinstance(scope, (*FUNC_TYPES, ast.Module, ast.ClassDef)) else []
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (*FUNC_TYPES, ast.ClassDef)):
            continue
        if (
            grad_only
            and isinstance(node, (ast.With, ast.AsyncWith))
            and any(_no_grad(i.context_expr) for i in node.items)
        ):
            continue
        inner = [s for c in block_children(node) for s in (c.body if isinstance(c, CLAUSES) else [c])]  # type: ignore[attr-defined]
        stack.extend(reversed(inner))


def _no_grad(expr: ast.AST) -> bool:
    func = expr.func if isinstance(expr, ast.Call) else expr
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return name in GRADLESS_CONTEXTS


def graph_nodes(expr: ast.AST):
    """The nodes of ``expr`` that autograd follows back: not below ``.detach()``."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in DETACHING_METHODS:
            continue
        stack.extend(children(node))


def assigned_values(
    scope: ast.AST, name: str, targets: bool = False, grad_only: bool = False, m: ModuleInfo | None = None
) -> list:
    """The expressions assigned to ``name`` anywhere in ``scope``'s own body (flow-insensitive).
    With ``targets``, pairs (value, whether ``name`` is the first element of a tuple target, as
    the model is in ``model, opt = fabric.setup(...)``)."""
    if isinstance(scope, ast.Module) and m is not None:
        found = _module_assignments(m, name, grad_only)
    else:
        statements_only = m is not None and not m.binds_in_expressions
        found = _assignment_index(scope, grad_only, statements_only).get(name, [])
    return list(found) if targets else [value for value, _ in found]


#: module -> (name, grad_only) -> its module-level assignments
_MODULE_ASSIGNMENTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _module_assignments(m: ModuleInfo, name: str, grad_only: bool) -> list[tuple[ast.AST, bool]]:
    """The module-level assignments of ``name``, from the statements that mention it (recorded
    at every call as a name-resolution look-up: only the statements binding it matter), found
    once per version: a global read such as ``enumerate`` is asked at every site."""
    m.record_lookup(name, "binding")
    per_module = _MODULE_ASSIGNMENTS.setdefault(m, {})
    found = per_module.get((name, grad_only))
    if found is None:
        tops = m.tops_with(name)
        found = per_module[(name, grad_only)] = _assigned_in(
            (n for top in tops for n in own_nodes(_Block([top]), grad_only)), name
        )
    return found


#: scope -> grad_only -> name -> [(value, whether the name is the target or a tuple's first element)]
_ASSIGNMENTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _assignment_index(
    scope: ast.AST, grad_only: bool, statements_only: bool = False
) -> dict[str, list[tuple[ast.AST, bool]]]:
    """Every assignment of ``scope``'s own body by the names it binds, in the order of
    :func:`own_nodes`, built once per scope (the rules ask about many names in the same
    function). ``statements_only``: its module holds no assignment expression, so only its
    statements assign (:func:`own_statements`, the same assignments in the same order)."""
    per_scope = _ASSIGNMENTS.setdefault(scope, {})
    index = per_scope.get(grad_only)
    if index is None:
        index = {}
        for node in (own_statements if statements_only else own_nodes)(scope, grad_only):
            for target, value in _assignments(node):
                if value is not None:
                    for name, first in _bound_names(target):
                        index.setdefault(name, []).append((value, first))
        per_scope[grad_only] = index
    return index


def _bound_names(target: ast.AST) -> list[tuple[str, bool]]:
    if isinstance(target, ast.Name):
        return [(target.id, True)]
    if isinstance(target, (ast.Tuple, ast.List)):
        head = target.elts[0] if target.elts else None
        names = {n for n in _tuple_names(target)}
        return [(n, isinstance(head, ast.Name) and head.id == n) for n in sorted(names)]
    return []


def _tuple_names(target: ast.AST):
    for e in target.elts:  # type: ignore[attr-defined]
        if isinstance(e, ast.Name):
            yield e.id
        elif isinstance(e, (ast.Tuple, ast.List)):
            yield from _tuple_names(e)
        elif isinstance(e, ast.Starred) and isinstance(e.value, ast.Name):
            yield e.value.id


def _assigned_in(nodes, name: str) -> list[tuple[ast.AST, bool]]:
    out: list[tuple[ast.AST, bool]] = []
    for node in nodes:
        for target, value in _assignments(node):
            if value is None:
                continue
            if isinstance(target, ast.Name) and target.id == name:
                out.append((value, True))
            elif isinstance(target, (ast.Tuple, ast.List)) and _in_tuple(target, name):
                first = isinstance(target.elts[0], ast.Name) and target.elts[0].id == name
                out.append((value, first))
    return out


class _Block(ast.Module):
    """A list of statements walked as a scope body."""

    def __init__(self, body: list) -> None:
        super().__init__(body=body, type_ignores=[])


def _in_tuple(target: ast.AST, name: str) -> bool:
    return any(
        (isinstance(e, ast.Name) and e.id == name)
        or (isinstance(e, (ast.Tuple, ast.List)) and _in_tuple(e, name))
        or (isinstance(e, ast.Starred) and isinstance(e.value, ast.Name) and e.value.id == name)
        for e in target.elts  # type: ignore[attr-defined]
    )


def _assignments(node: ast.AST) -> list[tuple[ast.AST, ast.AST | None]]:
    if isinstance(node, ast.Assign):
        return [(t, node.value) for t in node.targets]
    if isinstance(node, ast.AnnAssign):
        return [(node.target, node.value)]
    if isinstance(node, ast.AugAssign):
        return [(node.target, node)]
    if isinstance(node, ast.NamedExpr):
        return [(node.target, node.value)]
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return [(node.target, node.iter)]
    return []


def origin_key(fabric: FabricInst) -> tuple:
    """Identifies the ``Fabric(...)`` a value comes from across evaluations."""
    o = fabric.origin
    return (id(fabric),) if o is None else (o.path, o.span)


def fabric_in_scope(setups: Setups, call: ast.AST, m: ModuleInfo, fabrics: list[FabricInst]) -> str | None:
    """An expression that denotes one of ``fabrics`` at ``call`` (a name or ``self.<attr>`` of
    ``call``'s function read in it, a parameter, or a global), or None: the Fabric a fix can
    name there."""
    wanted = {origin_key(f) for f in fabrics}
    scope = m.scope_of(call)
    line = getattr(call, "lineno", 0)

    def same(values: list) -> bool:
        found = [v for v in values if isinstance(v, FabricInst)]
        return bool(found) and len(found) == len(values) and {origin_key(f) for f in found} <= wanted

    if isinstance(scope, FUNC_TYPES):
        for param in (*scope.args.posonlyargs, *scope.args.args, *scope.args.kwonlyargs):
            values = setups.inference.bounded(lambda p=param.arg: setups.inference.ev_param(scope, p, Ctx(m)), None)
            if values is not None and same(values):
                return param.arg
    tried: set[str] = set()
    for node in _self_attributes_of_class(m, scope):
        if same(setups.inference.evaluate(node, m)):
            return m.segment(node)
    for node in own_nodes(scope):
        # a Fabric is used as ``fabric.<method>``: only receivers of attribute reads are tried
        if not isinstance(node, ast.Attribute) or not _nameable(node.value, scope, line):
            continue
        receiver = node.value
        text = ast.dump(receiver)
        if text in tried:
            continue
        tried.add(text)
        if same(setups.inference.evaluate(receiver, m)):
            return m.segment(receiver)
    return None


def _nameable(node: ast.AST, scope: ast.AST, line: int) -> bool:
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name):
        return isinstance(scope, FUNC_TYPES) and bool(scope.args.args) and scope.args.args[0].arg == node.value.id
    if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
        return False
    if isinstance(scope, FUNC_TYPES) and is_param(scope, node.id):
        return True
    assigned = [v for v in assigned_values(scope, node.id)]
    if not assigned:
        return True  # a global (or builtin: it will not evaluate to a Fabric)
    return all(getattr(v, "lineno", line) < line for v in assigned)


def _self_attributes_of_class(m: ModuleInfo, scope: ast.AST) -> list[ast.Attribute]:
    """``self.<attr>`` receivers of attribute reads in the other methods of ``scope``'s class
    (``self.fabric.setup(...)`` in ``fit`` names the Fabric in ``training_step`` too)."""
    cls = m.enclosing_class(scope) if isinstance(scope, FUNC_TYPES) else None
    if cls is None or not scope.args.args:  # type: ignore[attr-defined]
        return []
    me = scope.args.args[0].arg  # type: ignore[attr-defined]
    out: list[ast.Attribute] = []
    seen: set[str] = set()
    for item in cls.body:
        if not isinstance(item, FUNC_TYPES) or item is scope or not item.args.args or item.args.args[0].arg != me:
            continue
        for node in own_nodes(item):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
                inner = node.value
                if isinstance(inner.value, ast.Name) and inner.value.id == me and inner.attr not in seen:
                    seen.add(inner.attr)
                    out.append(inner)
    return out


def relevant_setups(
    setups: Setups, at: ast.AST, loss: ast.expr | None, m: ModuleInfo, fabrics: list[FabricInst]
) -> list[ast.Call]:
    """The model setups on ``fabrics`` in ``m`` that a run reaching ``at`` (a backward of ``loss``)
    has made: those in ``at``'s function (its class, for a method) and in the functions that set
    up the models computing the loss. Setups in unrelated functions (another experiment of the
    same script) are not counted."""
    wanted = {origin_key(f) for f in fabrics}
    scopes = {id(s): s for s in [m.scope_of(at)]}
    cls = _class_of(m, at)
    if loss is not None:
        for use in setups.models_computing(loss, m):
            if use.setup.module is m:
                scope = m.scope_of(use.setup.call)
                scopes[id(scope)] = scope
    candidates = [
        c for scope in scopes.values() for c in _setup_calls_in(m, scope, lambda c, s=scope: m.scope_of(c) is s)
    ]
    if cls is not None:
        candidates += _setup_calls_in(m, cls, lambda c: _class_of(m, c) is cls)
    out = []
    for call in dict.fromkeys(candidates):  # a method's call is found in its scope and its class
        site = setups.setup_call(call, m)
        if site is not None and {origin_key(f) for f in site.fabrics} & wanted:
            out.append(call)
    return sorted(out, key=lambda c: (c.lineno, c.col_offset))


def _setup_calls_in(m: ModuleInfo, node: ast.AST, keep) -> list[ast.Call]:
    """The model setup calls inside ``node`` (a function, class or the module) that ``keep``
    accepts; inside a function or class only its own statement is read (and depended on)."""
    return [c for name in facts.MODEL_SETUP_METHODS for c in m.calls_within(node, name) if keep(c)]


def _class_of(m: ModuleInfo, node: ast.AST) -> ast.ClassDef | None:
    scope = m.scope_of(node)
    return m.enclosing_class(scope) if isinstance(scope, FUNC_TYPES) else None


_BRANCHES = tuple(t for t in (ast.If, ast.IfExp, ast.Try, getattr(ast, "Match", None)) if t is not None)


def under_if(m: ModuleInfo, node: ast.AST) -> bool:
    """Whether ``node`` runs only on some paths through its function (under an ``if``, ``try``,
    ``match``)."""
    scope = m.scope_of(node)
    cur = m.parent_of(node)
    while cur is not None and cur is not scope:
        if isinstance(cur, _BRANCHES):
            return True
        cur = m.parent_of(cur)
    return False
