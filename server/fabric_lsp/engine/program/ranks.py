"""Is a node reached on some ranks only? (FAB002's question.)

A node runs on a subset of the processes when one of the conditions that hold whenever it runs
(:func:`fabric_lsp.engine.python.flow.conditions_at`) is a *rank test*: a comparison of a rank
(``fabric.global_rank``, ``.local_rank``, ``.node_rank``, ``rank_zero_only.rank``,
``torch.distributed.get_rank()``, or a name bound to one of them) with a number, or the flag
``fabric.is_global_zero`` — in either branch, since ``rank == 0`` and ``rank != 0`` both leave some
ranks out. It also runs on some ranks only inside a function decorated with ``@rank_zero_only``,
or inside a function whose every call site (in this module, and named by no other module) is
itself reached on some ranks only. ``with fabric.rank_zero_first():`` is reported apart: its body
runs on every rank, but one rank at a time.

A test combined with ``or`` restricts the ranks only when every operand does (or tests the world
size, ``world_size == 1 or rank == 0``: one process is not a subset); with ``and`` one operand is
enough. Anything not understood is not a rank test.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from fabric_lsp import facts
from fabric_lsp.engine.python.astwalk import walk
from fabric_lsp.engine.python.flow import (
    Condition,
    conditions_at,
    conditions_here,
    enclosing_function,
    enclosing_withs,
    expression_conditions,
)
from fabric_lsp.engine.python.modules import ModuleInfo, last_name
from fabric_lsp.engine.workspace.workspace import Workspace

#: how deep "a function only called from such a branch" follows callers
MAX_CALLER_DEPTH = 3


@dataclass(frozen=True)
class RankGuard:
    """Why a node runs on some ranks only."""

    #: "branch", "exit", "assert", "expression" (a :class:`Condition`), "decorator", "callers" or
    #: "rank_zero_first"
    how: str
    #: the rank test, the decorator, the ``rank_zero_first()`` call, or the function's name node
    node: ast.AST
    #: the statement or expression holding it (the ``if``, the ``def``, the ``with``)
    holder: ast.AST
    module: ModuleInfo
    truth: bool = True
    #: for "callers": the function and the guard of each of its call sites
    function: ast.AST | None = None
    callers: tuple[tuple[ast.Call, RankGuard], ...] = field(default=())

    @property
    def text(self) -> str:
        return self.module.segment(self.node)


def divided_ranks(guard: RankGuard) -> str:
    """Which ranks the guard's test tells apart: ``"local"`` (it reads only local ranks: it divides
    the processes of one node), ``"node"`` (only node ranks: it divides the nodes) or
    ``"global"`` (any other rank, a decorator, or a mix)."""
    if guard.how == "callers":
        kinds = {divided_ranks(g) for _, g in guard.callers}
        return kinds.pop() if len(kinds) == 1 else "global"
    if guard.how in ("decorator", "rank_zero_first"):
        return "global"
    reads = set()
    for n in walk(guard.node):
        word = (
            n.attr
            if isinstance(n, ast.Attribute)
            else n.value
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
            else None
        )
        if word in ("local_rank", "LOCAL_RANK"):
            reads.add("local")
        elif word in ("node_rank", "NODE_RANK"):
            reads.add("node")
        elif word in ("global_rank", "is_global_zero", "rank", "RANK", "GLOBAL_RANK", "get_rank"):
            reads.add("global")
    return reads.pop() if len(reads) == 1 else "global"


def rank_guard(
    module: ModuleInfo, node: ast.AST, workspace: Workspace | None = None, depth: int = 0
) -> RankGuard | None:
    """Why ``node`` runs on some ranks only, or None when nothing says so."""
    stmt = module.stmt_of(node)
    for cond in expression_conditions(module, node, stmt):
        if _restricting(module, cond.test, cond.truth):
            return _from_condition(module, cond)
    guarded = _statement_guard(module, stmt) if stmt is not None else None
    if guarded is not None:
        return _from_condition(module, guarded)
    for item in enclosing_withs(module, node):
        call = item.context_expr
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == facts.RANK_ZERO_FIRST
        ):
            return RankGuard("rank_zero_first", call, module.parent_of(item) or call, module)
    func = enclosing_function(module, node)
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    for deco in func.decorator_list:
        if last_name(deco.func if isinstance(deco, ast.Call) else deco) == facts.RANK_ZERO_ONLY:
            return RankGuard("decorator", deco, func, module, function=func)
    if depth >= MAX_CALLER_DEPTH:
        return None
    return _guarded_callers(module, func, workspace, depth)


def direct_rank_guard(module: ModuleInfo, node: ast.AST) -> RankGuard | None:
    """Why ``node`` runs on some ranks only, from what surrounds it in its own function (a rank
    test, ``rank_zero_first()``, ``@rank_zero_only``), not from the function's callers."""
    return rank_guard(module, node, None, MAX_CALLER_DEPTH)


def _from_condition(module: ModuleInfo, cond: Condition) -> RankGuard:
    return RankGuard(cond.how, cond.test, cond.holder, module, cond.truth)


def _guarded_callers(module: ModuleInfo, func: ast.AST, workspace: Workspace | None, depth: int) -> RankGuard | None:
    """A guard when every reference to ``func`` is a call reached on some ranks only."""
    assert isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef))
    refs = _references(module, func)
    if not refs or any(not _is_called(module, ref) for ref in refs):
        return None
    guards = []
    for ref in refs:
        call = module.parent_of(ref)
        assert isinstance(call, ast.Call)
        guard = rank_guard(module, call, workspace, depth + 1)
        if guard is None:
            return None
        guards.append((call, guard))
    if workspace is not None and workspace.modules_mentioning(func.name, exclude=module.path, importing=module.path):
        return None  # another module may call it on every rank
    return RankGuard("callers", func, func, module, function=func, callers=tuple(guards))


def _references(module: ModuleInfo, func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    """Names and attributes that may refer to ``func`` in ``module``, outside ``func`` itself."""
    if module.tree is None:
        return []
    return [node for node in module.references(func.name) if not _inside(module, node, func)]


def _inside(module: ModuleInfo, node: ast.AST, container: ast.AST) -> bool:
    cur = module.parent_of(node)
    while cur is not None:
        if cur is container:
            return True
        cur = module.parent_of(cur)
    return False


def _is_called(module: ModuleInfo, ref: ast.AST) -> bool:
    parent = module.parent_of(ref)
    return isinstance(parent, ast.Call) and parent.func is ref


# -- rank tests --------------------------------------------------------------------------------


def restricts_ranks(module: ModuleInfo, test: ast.AST, truth: bool, depth: int = 0) -> bool:
    """Whether ``test`` having truth value ``truth`` leaves some ranks out."""
    if depth > 4:
        return False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return restricts_ranks(module, test.operand, not truth, depth + 1)
    if isinstance(test, ast.BoolOp):
        return _bool_op(module, test, truth, depth)
    if isinstance(test, ast.Compare):
        return _compare(module, test, depth)
    if isinstance(test, ast.Name):
        values = _bound_values(module, test)
        return bool(values) and all(restricts_ranks(module, v, truth, depth + 1) for v in values)
    return _is_zero_flag(test) or is_rank_expr(module, test, depth + 1)  # `if rank:` is `rank != 0`


def _statement_guard(module: ModuleInfo, stmt: ast.AST) -> Condition | None:
    """The innermost of the conditions :func:`~fabric_lsp.engine.python.flow.conditions_here`
    gives for ``stmt`` and the statements around it (in its function) that leaves some ranks
    out: worked out once per statement of a module version (every call of a block, and the
    blocks inside it, ask it again)."""
    key = ("statement", id(stmt))
    known = module.rank_tests.get(key)
    if known is not None and known[0] is stmt:
        return known[1]
    here, above = conditions_here(module, stmt)
    found = next((c for c in here if _restricting(module, c.test, c.truth)), None)
    if found is None and above is not None:
        found = _statement_guard(module, above)
    module.rank_tests[key] = (stmt, found)
    return found


def _restricting(module: ModuleInfo, test: ast.AST, truth: bool) -> bool:
    """:func:`restricts_ranks`, answered once per test of a module version."""
    key = ("test", id(test), truth)
    known = module.rank_tests.get(key)
    if known is None or known[0] is not test:
        known = module.rank_tests[key] = (test, restricts_ranks(module, test, truth))
    return bool(known[1])


def _bool_op(module: ModuleInfo, test: ast.BoolOp, truth: bool, depth: int) -> bool:
    conjunction = isinstance(test.op, ast.And)
    if conjunction == truth:  # every operand holds with this truth: one restricting is enough
        return any(restricts_ranks(module, v, truth, depth + 1) for v in test.values)
    if not truth:  # `not (a and b)`: some operand is false, which one is not known
        return False
    return all(restricts_ranks(module, v, True, depth + 1) or _tests_world_size(v) for v in test.values)


def _compare(module: ModuleInfo, test: ast.Compare, depth: int) -> bool:
    if len(test.ops) != 1:
        return False
    left, right, op = test.left, test.comparators[0], test.ops[0]
    if not isinstance(op, (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
        return False
    for rank, other, flipped in ((left, right, False), (right, left, True)):
        number = _int_constant(other)
        if number is not None and is_rank_expr(module, rank, depth + 1):
            return not _always_true(op, number, flipped)
    return _is_zero_flag(left) and isinstance(right, ast.Constant) and isinstance(right.value, bool)


def _always_true(op: ast.cmpop, number: int, flipped: bool) -> bool:
    """``rank >= 0``, ``rank > -1`` (or ``0 <= rank``): true on every rank."""
    if flipped:
        op = {ast.Lt: ast.Gt(), ast.LtE: ast.GtE(), ast.Gt: ast.Lt(), ast.GtE: ast.LtE()}.get(type(op), op)
    return (isinstance(op, ast.GtE) and number <= 0) or (isinstance(op, ast.Gt) and number < 0)


def _int_constant(node: ast.AST) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int_constant(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isdigit():
        return int(node.value)  # os.environ["LOCAL_RANK"] == "0"
    return None


def _tests_world_size(test: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr in facts.WORLD_SIZE_ATTRIBUTES for n in ast.walk(test))


def _is_zero_flag(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in facts.RANK_ZERO_FLAGS


def is_rank_expr(module: ModuleInfo, expr: ast.AST, depth: int = 0) -> bool:
    """Whether ``expr`` evaluates to the process's rank."""
    if depth > 4:
        return False
    if isinstance(expr, ast.Attribute):
        if expr.attr in facts.RANK_ATTRIBUTES:
            return True
        return expr.attr == "rank" and last_name(expr.value) == facts.RANK_ZERO_ONLY
    if isinstance(expr, ast.Call):
        if last_name(expr.func) in facts.RANK_FUNCTIONS:
            return True
        if isinstance(expr.func, ast.Name) and expr.func.id == "int" and len(expr.args) == 1:
            return is_rank_expr(module, expr.args[0], depth + 1) or _is_rank_env(expr.args[0])
        return False
    if isinstance(expr, ast.Name):
        values = _bound_values(module, expr)
        return bool(values) and all(is_rank_expr(module, v, depth + 1) for v in values)
    return _is_rank_env(expr)


def _is_rank_env(expr: ast.AST) -> bool:
    """``os.environ["LOCAL_RANK"]`` / ``os.environ.get("RANK")`` / ``os.getenv("NODE_RANK")``."""
    key: ast.AST | None = None
    if isinstance(expr, ast.Subscript) and last_name(expr.value) == "environ":
        key = expr.slice
    elif isinstance(expr, ast.Call) and last_name(expr.func) in ("get", "getenv") and expr.args:
        key = expr.args[0]
    return isinstance(key, ast.Constant) and key.value in ("RANK", "LOCAL_RANK", "NODE_RANK", "GLOBAL_RANK")


def _bound_values(module: ModuleInfo, name: ast.Name) -> list[ast.AST]:
    """The values assigned to ``name`` in its scope (simple ``name = value`` statements only)."""
    scope = enclosing_function(module, name) or module.tree
    if scope is None:
        return []
    out: list[ast.AST] = []
    for node in module.walked(scope, _BINDING_NODES):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name.id for t in node.targets):
            out.append(node.value)
        elif (
            isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr))
            and isinstance(node.target, ast.Name)
            and node.target.id == name.id
        ):
            if node.value is None or isinstance(node, ast.AugAssign):
                return []
            out.append(node.value)
        elif isinstance(node, ast.arg) and node.arg == name.id:
            return []  # a parameter: any value
    return out


#: the nodes :func:`_bound_values` reads
_BINDING_NODES = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.arg)


# -- the other ranks' side ---------------------------------------------------------------------


def _normalised(test: ast.AST, truth: bool) -> tuple[str, bool]:
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, truth = test.operand, not truth
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.NotEq):
        test, truth = ast.Compare(test.left, [ast.Eq()], test.comparators), not truth
    return ast.dump(test), truth


def paired(module: ModuleInfo, call: ast.Call, guard: RankGuard, methods: tuple[str, ...]) -> bool:
    """Whether the ranks ``guard`` leaves out call one of ``methods`` on the same receiver under
    the opposite test (``if rank == 0: fabric.save(...) else: fabric.barrier()``, or the
    hand-written ``rank_zero_first``: ``if rank != 0: barrier()`` … ``if rank == 0: barrier()``)."""
    if guard.how not in ("branch", "exit", "expression") or not isinstance(call.func, ast.Attribute):
        return False
    key = _normalised(guard.node, guard.truth)
    receiver = ast.dump(call.func.value)
    scope = enclosing_function(module, call) or module.tree
    if scope is None:
        return False
    for other in module.walked(scope, (ast.Call,)):  # the calls of a scope, walked once per version
        if other is call or not isinstance(other, ast.Call) or not isinstance(other.func, ast.Attribute):
            continue
        if other.func.attr not in methods or ast.dump(other.func.value) != receiver:
            continue
        for cond in conditions_at(module, other):
            other_key = _normalised(cond.test, cond.truth)
            if other_key[0] == key[0] and other_key[1] != key[1]:
                return True
    return False
