"""Memos of the evaluator: a use's reaching bindings (:meth:`Inference.reaching`) and a node's span
and text (:meth:`ModuleInfo.span`), once per module version; the operands of a test that
:func:`conditions.constrained` substitutes a name in, once per test. A remembered answer must be
the answer a fresh computation gives, and cost what it costs."""

from __future__ import annotations

import ast
import textwrap

from fabric_lsp.engine.program.infer import Inference
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.python.values import Budget

SOURCE = textwrap.dedent(
    """
    x = 1
    if flag:
        x = 2
    def f(n):
        if n is None:
            n = 3
        y = n
        return y
    z = x
    """
).lstrip("\n")


def _use(m: ModuleInfo, name: str, line: int) -> ast.Name:
    return next(
        n
        for n in ast.walk(m.tree)
        if isinstance(n, ast.Name) and n.id == name and n.lineno == line and isinstance(n.ctx, ast.Load)
    )


def _ask(inference: Inference, m: ModuleInfo, use: ast.Name):
    inference.budget = Budget(deadline=float("inf"))
    m.lookups = {}
    found, definite, narrow = inference.reaching(use.id, m.stmt_of(use), m.scope_of(use), m)
    return (
        (tuple((b.kind, b.node.lineno, b.narrow) for b in found), definite, narrow),
        inference.budget.steps,
        m.lookups,
    )


def test_reaching_remembered_is_the_fresh_walk_with_its_cost_and_lookups():
    m = ModuleInfo(SOURCE)
    use = _use(m, "x", 9)  # module level: looks up the statements mentioning `x`
    first = _ask(Inference(), m, use)
    assert m.reaching_walks  # remembered in the module version
    again = _ask(Inference(), m, use)
    other = ModuleInfo(SOURCE)
    fresh = _ask(Inference(), other, _use(other, "x", 9))
    assert again == first == fresh
    assert first[1] > 0 and "x" in first[2]  # the replay ticks and records the look-up too
    assert [line for _, line, _ in first[0][0]] == [3, 1]
    # what the walk itself (no memo) answers
    inference = Inference()
    found, definite, narrow = inference._reaching("x", other.stmt_of(_use(other, "x", 9)), other.tree, other)
    assert (tuple((b.kind, b.node.lineno, b.narrow) for b in found), definite, narrow) == first[0]


def test_reaching_is_remembered_per_use_and_per_name():
    m = ModuleInfo(SOURCE)
    inference = Inference()
    n_use = _use(m, "n", 7)
    y_use = _use(m, "y", 8)
    n_answer = _ask(inference, m, n_use)[0]
    y_answer = _ask(inference, m, y_use)[0]
    assert n_answer != y_answer
    assert [line for _, line, _ in n_answer[0]] == [6]
    assert [line for _, line, _ in y_answer[0]] == [7]
    assert _ask(inference, m, n_use)[0] == n_answer  # the remembered one is still the use's own


def test_reaching_replay_runs_out_of_budget_where_the_walk_would():
    m = ModuleInfo(SOURCE)
    use = _use(m, "x", 9)
    inference = Inference()
    _, steps, _ = _ask(inference, m, use)
    inference.budget = Budget(steps=4000 - steps + 1, deadline=float("inf"))  # the walk's last tick is one too many
    try:
        inference.reaching("x", m.stmt_of(use), m.scope_of(use), m)
    except Exception as e:  # noqa: BLE001
        assert type(e).__name__ == "BudgetExceeded"
    else:
        raise AssertionError("the replay must charge the walk's steps")


def test_span_and_segment_are_the_nodes_own_and_follow_a_moved_node():
    m = ModuleInfo("a = 1\nbb = (2 +\n  3)\n")
    nodes = [n for n in ast.walk(m.tree) if isinstance(n, (ast.BinOp, ast.Constant, ast.Name))]
    for n in nodes:
        assert m.segment(n) == ast.get_source_segment(m.text, n)
        assert m.segment(n) == m.segment(n)
    binop = next(n for n in nodes if isinstance(n, ast.BinOp))
    assert m.segment(binop) == "2 +\n  3"
    start = m.span(binop).start
    assert (start.line, start.col) == (1, 6)
    one = next(n for n in nodes if isinstance(n, ast.Constant) and n.value == 1)
    ast.copy_location(binop, one)  # a node whose location changes is measured again
    binop.end_lineno, binop.end_col_offset = one.end_lineno, one.end_col_offset
    assert m.segment(binop) == "1"


GUARDED = textwrap.dedent(
    """
    LIMIT = 4
    def f(n):
        if n is None or n > LIMIT:
            raise ValueError
        return n
    """
).lstrip("\n")


def _guard(m: ModuleInfo) -> ast.expr:
    return next(n for n in ast.walk(m.tree) if isinstance(n, ast.If)).test


def test_constrained_substitutes_each_alternative_and_evaluates_the_rest_once():
    from fabric_lsp.engine.python import conditions
    from fabric_lsp.engine.python.values import Const, Ctx

    m = ModuleInfo(GUARDED)
    test = _guard(m)
    values = [Const(None), Const(5), Const(2), Const(4)]
    # each alternative on its own (nothing shared between them): what the test says of it
    alone = Inference()
    alone.budget = Budget(deadline=float("inf"))
    expected = []
    for v in values:
        if any(outcome is False for outcome, _ in conditions.truth(alone, test, Ctx(m), ("n", v))):
            expected.append(v.value)
    together = Inference()
    together.budget = Budget(deadline=float("inf"))
    kept = conditions.constrained(together, values, ((test, False),), Ctx(m), "n")
    assert [v.value for v in kept] == expected == [2, 4]
    # `LIMIT` was evaluated once, and charged as often as it was asked
    assert together.budget.steps == alone.budget.steps
