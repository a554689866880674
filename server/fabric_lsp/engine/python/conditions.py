"""Conditions: which way a test goes on each path, and the tests a statement is reached under.

:func:`truth` evaluates a test (``tpu``, ``devices > 1``, ``x is None``, ``not a and b`` …) to
its outcomes, each with the path it holds on: a test over known values folds (``devices = 1``
makes ``devices > 1`` false on every path), a test over values it cannot decide becomes a
decision of its own, true on one path and false on the other — the same decision wherever the
same test is written in the same scope, so that ``x if tpu else y`` and ``u if tpu else v`` go
the same way.

:func:`conditions_of` lists the tests a statement is reached under inside its function: the
``if``/``elif`` branches around it, and the guards before it (``if n > 1: raise …``, an early
``return``, ``assert``). :func:`constrained` keeps the alternatives that can reach a statement.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any, Optional

from fabric_lsp.engine.python import paths
from fabric_lsp.engine.python.modules import FUNC_TYPES, ModuleInfo
from fabric_lsp.engine.python.values import (
    ClassRef,
    Const,
    Ctx,
    DictVal,
    Evaluator,
    FuncRef,
    ModuleRef,
    QualRef,
    Seq,
    Unknown,
    Value,
)

#: (test, the outcome the statement needs)
Condition = tuple[ast.expr, bool]
Outcomes = list[tuple[bool, frozenset]]
#: a name evaluated to one given alternative (narrowing a name's earlier values by a test)
Subst = Optional[tuple[str, Value]]

#: at most this many outcomes per test (more: the test is treated as not known)
MAX_OUTCOMES = 64

_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: lambda a, b: a is b if a is None or b is None or isinstance(a, bool) else a == b,
    ast.IsNot: lambda a, b: a is not b if a is None or b is None or isinstance(a, bool) else a != b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


def decision(test: ast.AST, ctx: Ctx) -> tuple:
    """The decision a test not known statically makes: one per text in its scope, in one call's
    bound arguments (a value tested in several functions is one decision through
    :func:`_value_decision`)."""
    m = ctx.module
    known = m.decision_keys.get(id(test))
    if known is None or known[0] is not test:  # the test's text and scope: once per test
        anchor = getattr(test, "_fabric_lsp_anchor", test)  # a case's comparison: where its subject is
        text = " ".join(m.segment(test).split())
        if anchor is not test:
            text = f"{m.segment(anchor)} ~ {text}"
        known = m.decision_keys[id(test)] = (test, id(m.scope_of(anchor)), text)
    return ("test", known[1], known[2], ctx.signature)


def _value_decision(v: Value, how: tuple) -> tuple | None:
    """The decision a test of one value not known makes, wherever the value is tested: a named
    value followed from its source (a parameter, a command-line option) keeps its identity on
    the way, so that ``if tpu:`` in a helper that received ``tpu`` goes the way the caller's did."""
    if isinstance(v, Unknown) and "`" in v.reason and paths.path_of(v):
        return ("value", v.reason, paths.path_of(v), how)
    return None


def agrees(source: tuple[str, frozenset], value: Any, path: frozenset) -> bool:
    """Whether ``value``, taken for the value not known ``source`` (its reason and path), goes the
    way ``path``'s decisions on that value went (``devices`` assumed 1 on the path where
    ``args.gpus > 1`` held does not)."""
    for key, outcome in path:
        if not (isinstance(key, tuple) and len(key) == 4 and key[0] == "value" and (key[1], key[2]) == source):
            continue
        result = _decided_by(key[3], value)
        if result is not None and result != outcome:
            return False
    return True


def _decided_by(how: tuple, value: Any) -> bool | None:
    try:
        if how == ("truthy",):
            return bool(value)
        op, side, other = how
        compare = _COMPARE[getattr(ast, op)]
        known = ast.literal_eval(other)
        return bool(compare(value, known) if side == "right" else compare(known, value))
    except Exception:  # noqa: BLE001 - a comparison Python would reject: not decided here
        return None


def _undecided(test: ast.AST, ctx: Ctx, path: frozenset = paths.EMPTY, key: tuple | None = None) -> Outcomes:
    key = key or decision(test, ctx)
    if key in paths.decisions(path):  # decided on this path already: the way it went
        return [(outcome, path) for outcome in (True, False) if (key, outcome) in path]
    return [(outcome, paths.extended_by(path, (key, outcome))) for outcome in (True, False)]


#: id(operand) → (operand, its alternatives, the budget and steps evaluating it took): the operands
#: of one test evaluated once for all the alternatives :func:`constrained` substitutes (see there)
Operands = Optional[dict]


def _operand(ev: Evaluator, node: ast.AST, ctx: Ctx, subst: Subst, operands: Operands = None) -> list[Value]:
    if subst is not None and isinstance(node, ast.Name) and node.id == subst[0]:
        return [subst[1]]
    if operands is None:
        return ev.ev(node, ctx)
    known = operands.get(id(node))
    budget = ev.budget
    if known is not None and known[0] is node and known[2] is budget:
        tick = budget.tick
        for _ in range(known[3]):  # what evaluating it again costs: the budget runs out where it would
            tick()
        return known[1]
    before = budget.steps
    values = ev.ev(node, ctx)
    if ev.budget is budget:
        operands[id(node)] = (node, values, budget, budget.steps - before)
    return values


def _plain(ev: Evaluator, v: Value) -> tuple[bool, Any]:
    """(True, the plain value) for a constant or a sequence of constants; (False, None) else."""
    if isinstance(v, Const):
        return True, v.value
    if isinstance(v, Seq) and v.ctx is not None:
        items = []
        for item in v.items:
            vals = ev.ev(item, v.ctx)
            if len(vals) != 1 or not isinstance(vals[0], Const):
                return False, None
            items.append(vals[0].value)
        return True, tuple(items)
    return False, None


def _is_object(v: Value) -> bool:
    """A value that is certainly not None (a class, a function, an instance …)."""
    return not isinstance(v, (Unknown, Const, Seq, DictVal))


def truthiness(v: Value) -> bool | None:
    if isinstance(v, Const):
        try:
            return bool(v.value)
        except Exception:  # noqa: BLE001 - a value whose truth is not plain
            return None
    if isinstance(v, Seq):
        return v.length > 0
    if isinstance(v, DictVal):
        return bool(v.node.keys)
    if isinstance(v, (ClassRef, FuncRef, ModuleRef, QualRef)):
        return True
    return None


def _compare_pair(op: ast.cmpop, a: Value, pa: tuple[bool, Any], b: Value, pb: tuple[bool, Any]) -> bool | None:
    """``a op b`` where both sides are known (``pa``, ``pb``: their :func:`_plain` values)."""
    if isinstance(op, (ast.Is, ast.IsNot)) and (
        _is_object(a)
        and isinstance(b, Const)
        and b.value is None
        or _is_object(b)
        and isinstance(a, Const)
        and a.value is None
    ):
        return isinstance(op, ast.IsNot)
    if not (pa[0] and pb[0]):
        return None
    try:
        return bool(_COMPARE[type(op)](pa[1], pb[1]))
    except Exception:  # noqa: BLE001 - comparing values Python would reject: not decided here
        return None


def _compare(ev: Evaluator, test: ast.Compare, ctx: Ctx, subst: Subst, operands: Operands = None) -> Outcomes:
    if len(test.ops) != 1 or type(test.ops[0]) not in _COMPARE:
        return _undecided(test, ctx)
    op = test.ops[0]
    lefts = [(a, _plain(ev, a), paths.path_of(a)) for a in _operand(ev, test.left, ctx, subst, operands)]
    rights = [(b, _plain(ev, b), paths.path_of(b)) for b in _operand(ev, test.comparators[0], ctx, subst, operands)]
    out: Outcomes = []
    for a, pa, path_a in lefts:
        for b, pb, path_b in rights:
            p = paths.merge(path_a, path_b)
            if p is None:
                continue
            result = _compare_pair(op, a, pa, b, pb)
            out += (
                [(result, p)] if result is not None else _undecided(test, ctx, p, _compare_decision(op, a, pa, b, pb))
            )
    return _distinct(out, test, ctx)


def _compare_decision(op: ast.cmpop, a: Value, pa: tuple[bool, Any], b: Value, pb: tuple[bool, Any]) -> tuple | None:
    if pb[0] and not pa[0]:
        return _value_decision(a, (type(op).__name__, "right", repr(pb[1])))
    if pa[0] and not pb[0]:
        return _value_decision(b, (type(op).__name__, "left", repr(pa[1])))
    return None


def _bool_op(ev: Evaluator, test: ast.BoolOp, ctx: Ctx, subst: Subst, operands: Operands = None) -> Outcomes:
    short_circuit = isinstance(test.op, ast.Or)  # `or` stops at the first true operand
    pending: Outcomes = [(not short_circuit, paths.EMPTY)]
    done: Outcomes = []
    for operand in test.values:
        nxt: Outcomes = []
        for _, p in pending:
            for outcome, q in truth(ev, operand, ctx, subst, operands):
                merged = paths.merge(p, q)
                if merged is None:
                    continue
                (done if outcome == short_circuit else nxt).append((outcome, merged))
        pending = nxt
    return _distinct(done + pending, test, ctx)


def _values_truth(ev: Evaluator, test: ast.AST, ctx: Ctx, subst: Subst, operands: Operands = None) -> Outcomes:
    out: Outcomes = []
    for v in _operand(ev, test, ctx, subst, operands):
        t = truthiness(v)
        out += (
            [(t, paths.path_of(v))]
            if t is not None
            else _undecided(test, ctx, paths.path_of(v), _value_decision(v, ("truthy",)))
        )
    return _distinct(out, test, ctx)


def _distinct(out: Outcomes, test: ast.AST, ctx: Ctx) -> Outcomes:
    seen: Outcomes = list(dict.fromkeys(out))  # the first of each, in order
    return seen if len(seen) <= MAX_OUTCOMES else _undecided(test, ctx)


def truth(ev: Evaluator, test: ast.AST, ctx: Ctx, subst: Subst = None, operands: Operands = None) -> Outcomes:
    """The outcomes of ``test``, each with the path it holds on (``operands``: where the
    alternatives of the operands not substituted are kept, for the next substitution)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return [(not outcome, p) for outcome, p in truth(ev, test.operand, ctx, subst, operands)]
    if isinstance(test, ast.BoolOp):
        return _bool_op(ev, test, ctx, subst, operands)
    if isinstance(test, ast.Compare):
        return _compare(ev, test, ctx, subst, operands)
    if isinstance(test, (ast.Call, ast.NamedExpr)):
        return _undecided(test, ctx)
    return _values_truth(ev, test, ctx, subst, operands)


# --------------------------------------------------------------------------------------------
# The tests a statement is reached under
# --------------------------------------------------------------------------------------------

_EXITS = frozenset({"exit", "quit", "_exit", "abort"})


def terminates(block: list) -> bool:
    """Whether running ``block`` never reaches the statement after it."""
    if not block:
        return False
    last = block[-1]
    if isinstance(last, (ast.Raise, ast.Return, ast.Continue, ast.Break)):
        return True
    if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
        f = last.value.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        return name in _EXITS
    if isinstance(last, ast.If):
        return terminates(last.body) and terminates(last.orelse)
    return False


def guard(stmt: ast.stmt) -> Condition | None:
    """The condition the statements after ``stmt`` are reached under, when ``stmt`` is a guard:
    ``if c: raise`` (c is false after it), ``assert c`` (c is true)."""
    if isinstance(stmt, ast.Assert):
        return (stmt.test, True)
    if isinstance(stmt, ast.If):
        body, orelse = terminates(stmt.body), terminates(stmt.orelse)
        if body and not orelse:
            return (stmt.test, False)
        if orelse and not body:
            return (stmt.test, True)
    return None


def _pattern_test(subject: ast.expr, pattern: ast.pattern) -> ast.expr | None:
    """The test a ``case`` pattern makes of the subject, where it is a plain comparison
    (``case "big":``, ``case None:``, ``case "a" | "b":``); None for any other pattern."""
    kind = type(pattern).__name__  # by name: the bundled server also runs on Python 3.9, before `match`
    if kind == "MatchValue":
        test: ast.expr = ast.Compare(subject, [ast.Eq()], [pattern.value])  # type: ignore[attr-defined]
    elif kind == "MatchSingleton":
        test = ast.Compare(subject, [ast.Is()], [ast.Constant(pattern.value)])  # type: ignore[attr-defined]
    elif kind == "MatchOr":
        parts = [_pattern_test(subject, p) for p in pattern.patterns]  # type: ignore[attr-defined]
        known = [p for p in parts if p is not None]
        if len(known) != len(parts):
            return None
        test = ast.BoolOp(ast.Or(), known)
    else:
        return None
    return ast.copy_location(test, pattern)


def _case_conditions(m: ModuleInfo, case: ast.match_case) -> list[Condition]:
    """A ``case`` body is reached when its pattern (and guard) matches and no earlier case did."""
    match = m.parent_of(case)
    if type(match).__name__ != "Match":
        return []
    out: list[Condition] = []
    for earlier in match.cases:
        if earlier is case:
            break
        test = _case_test(m, match, earlier)
        if test is not None and earlier.guard is None:
            out.append((test, False))
    test = _case_test(m, match, case)
    if test is not None:
        out.append((test, True))
    if case.guard is not None:
        out.append((case.guard, True))
    return out


def _case_test(m: ModuleInfo, match: ast.Match, case: ast.match_case) -> ast.expr | None:
    """The comparison a case makes, built once per case (its identity keys its decision)."""
    if not hasattr(case, "_fabric_lsp_test"):
        test = _pattern_test(match.subject, case.pattern)
        case._fabric_lsp_test = test  # type: ignore[attr-defined]
        if test is not None:
            test._fabric_lsp_anchor = match.subject  # type: ignore[attr-defined]  # its scope and class
    cached: ast.expr | None = case._fabric_lsp_test  # type: ignore[attr-defined]
    return cached


def conditions_of(m: ModuleInfo, stmt: ast.AST | None) -> tuple[Condition, ...]:
    """The tests ``stmt`` is reached under in its function (at module level: inside its own
    top-level statement, whose text is what the analysis depends on)."""
    if stmt is None:
        return ()
    out: list[Condition] = []
    cur = stmt
    while True:
        parent, block, idx = m.block_of(cur)
        if parent is None or isinstance(parent, (*FUNC_TYPES, ast.ClassDef, ast.Lambda)):
            break
        if parent is m.tree:
            break
        for prev in block[:idx]:
            g = guard(prev)
            if g is not None:
                out.append(g)
        if isinstance(parent, ast.If):
            out.append((parent.test, any(cur is s for s in parent.body)))
        is_case = type(parent).__name__ == "match_case"
        if is_case:
            out += _case_conditions(m, parent)  # type: ignore[arg-type]
        if is_case or isinstance(parent, ast.ExceptHandler):
            parent = m.parent_of(parent)
            if parent is None:
                break
        cur = parent
    if isinstance(m.block_of(cur)[0], FUNC_TYPES):
        block, idx = m.block_of(cur)[1:]
        out += [g for prev in block[:idx] if (g := guard(prev)) is not None]
    return tuple(out)


def constrained(
    ev: Evaluator, values: list[Value], conditions: tuple[Condition, ...], ctx: Ctx, subst_name: str | None = None
) -> list[Value]:
    """The alternatives that can reach a statement reached under ``conditions``, each on the
    path it does so (``subst_name``: each alternative is the value of that name in the tests).

    Substituting, only the name itself takes each alternative in turn: the test's other operands
    (``args.devices`` in ``n > args.devices``, ``x.y`` in ``x.y is None``) are the same
    expressions in the same context for every alternative, evaluated once for all of them."""
    for test, wanted in conditions:
        kept: list[Value] = []
        kept_ids: set[int] = set()  # the alternatives kept, by identity (they are alive in kept)
        shared = None if subst_name is not None else ev.truth(test, ctx)
        operands: dict = {}
        for v in values:
            outcomes = shared if shared is not None else truth(ev, test, ctx, (subst_name, v), operands)  # type: ignore[arg-type]
            for outcome, p in outcomes:
                if outcome == wanted:
                    x = paths.extended(v, p)
                    if x is not None and id(x) not in kept_ids:
                        kept.append(x)
                        kept_ids.add(id(x))
        values = kept
    return values
