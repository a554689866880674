"""Questions asked once per analysis (:class:`AskedOnce`): a question whose working out ran out of
evaluation steps fails again at once wherever its analysis asks it again, with the same look-ups
recorded; another analysis that shares the failure fails at once where it asks with no more steps
left, and works it out again where it has more."""

from __future__ import annotations

import math

import pytest
from fabric_lsp.engine.program.infer import Inference
from fabric_lsp.engine.python import values
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.python.values import Budget, BudgetExceeded
from fabric_lsp.engine.workspace.memo import AskedOnce


def _memo() -> tuple[AskedOnce, Inference, ModuleInfo]:
    module = ModuleInfo("x = 1\n", "/project/m.py", "m")
    inference = Inference()
    memo = AskedOnce(module, inference)
    inference.asked_once = memo
    inference.budget = Budget(deadline=math.inf)
    return memo, inference, module


def _runs_out(inference: Inference, module: ModuleInfo, calls: list[int]):
    def compute():
        calls.append(1)
        module.lookups.setdefault("x", set()).add("load")  # type: ignore[union-attr]
        while True:
            inference.budget.tick()

    return compute


def _spins(inference: Inference, calls: list[int]):
    def compute():
        calls.append(1)
        while True:
            inference.budget.tick()

    return compute


def test_a_question_that_ran_out_of_steps_fails_again_without_being_worked_out():
    memo, inference, module = _memo()
    calls: list[int] = []
    with pytest.raises(BudgetExceeded):
        memo(("q",), _runs_out(inference, module, calls))
    inference.budget = Budget(deadline=math.inf)
    inference.budget.steps = 10  # more spent than when it was first asked (0)
    module.lookups = {}
    with pytest.raises(BudgetExceeded) as failed:
        memo(("q",), _runs_out(inference, module, calls))
    assert failed.value.steps
    assert calls == [1]
    assert module.lookups == {"x": {"load"}}  # what working it out looked up, recorded again


def test_its_analysis_does_not_work_it_out_again_with_more_steps_left():
    """A few more steps rarely finish what a whole budget did not: working it out again costs a
    whole budget again (litgpt's ``api.py`` did so six times for one ``Fabric(...)``)."""
    memo, inference, module = _memo()
    calls: list[int] = []
    inference.budget.steps = values.MAX_STEPS - 5
    with pytest.raises(BudgetExceeded):
        memo(("q",), _runs_out(inference, module, calls))
    inference.budget = Budget(deadline=math.inf)  # a fresh budget: fewer steps spent than the first time
    module.lookups = {}
    with pytest.raises(BudgetExceeded) as failed:
        memo(("q",), _runs_out(inference, module, calls))
    assert failed.value.steps
    assert calls == [1]
    assert module.lookups == {"x": {"load"}}


def test_running_out_of_time_is_not_remembered():
    memo, inference, module = _memo()
    calls: list[int] = []

    def late():
        calls.append(1)
        raise BudgetExceeded()  # the deadline, not the steps

    for _ in range(2):
        with pytest.raises(BudgetExceeded):
            memo(("q",), late)
    assert calls == [1, 1]


def test_a_question_about_another_module_that_ran_out_fails_at_once_in_other_analyses(tmp_path):
    from fabric_lsp.engine.workspace.workspace import Workspace

    workspace = Workspace(str(tmp_path))
    helper = ModuleInfo("def f(): ...\n", str(tmp_path / "helper.py"), "helper")
    calls: list[int] = []

    def analysis(name: str) -> tuple[AskedOnce, Inference, ModuleInfo]:
        module = ModuleInfo("x = 1\n", str(tmp_path / name), name[:-3])
        inference = Inference(workspace)
        memo = AskedOnce(module, inference)
        inference.asked_once = memo
        inference.budget = Budget(deadline=math.inf)
        return memo, inference, module

    for name in ("a.py", "b.py"):
        memo, inference, _ = analysis(name)
        inference.budget.steps = 10
        with workspace.recording(), pytest.raises(BudgetExceeded):
            memo(("q", id(helper.tree)), _spins(inference, calls), (helper.tree, helper))
    assert calls == [1]  # b.py was not worked out again: it looked nothing up in a.py
    memo, inference, _ = analysis("c.py")  # with more steps left than a.py had: worked out again
    with workspace.recording(), pytest.raises(BudgetExceeded):
        memo(("q", id(helper.tree)), _spins(inference, calls), (helper.tree, helper))
    assert calls == [1, 1]


def test_a_failure_that_read_its_asker_is_not_shared(tmp_path):
    from fabric_lsp.engine.workspace.workspace import Workspace

    workspace = Workspace(str(tmp_path))
    helper = ModuleInfo("def f(): ...\n", str(tmp_path / "helper.py"), "helper")
    calls: list[int] = []
    for name in ("a.py", "b.py"):
        module = ModuleInfo("x = 1\n", str(tmp_path / name), name[:-3])
        inference = Inference(workspace)
        memo = AskedOnce(module, inference)
        inference.asked_once = memo
        inference.budget = Budget(deadline=math.inf)
        module.lookups = {}
        with workspace.recording(), pytest.raises(BudgetExceeded):
            memo(("q", id(helper.tree)), _runs_out(inference, module, calls), (helper.tree, helper))
    assert calls == [1, 1]  # each worked it out: the answer read `x` of its own document


def test_a_shared_answer_holds_the_look_ups_of_the_answers_it_reused(tmp_path):
    """An answer about another module that reuses one its analysis worked out before (the
    analysis's own memo) records that one's look-ups too: another analysis that takes the shared
    answer depends on them as the first one did (else a file's recorded look-ups, and the cache
    entries kept from them, depend on what its worker checked before it)."""
    from fabric_lsp.engine.workspace.workspace import Workspace

    workspace = Workspace(str(tmp_path))
    helper = ModuleInfo("class A: ...\nclass B: ...\n", str(tmp_path / "helper.py"), "helper")
    inner_node, outer_node = helper.tree.body
    base = str(tmp_path / "base.py")

    def inner():
        workspace._recorder().paths.add(base)  # what working it out read
        return "inner"

    def analysis(name: str) -> tuple[AskedOnce, Inference]:
        module = ModuleInfo("x = 1\n", str(tmp_path / name), name[:-3])
        inference = Inference(workspace)
        memo = AskedOnce(module, inference)
        inference.asked_once = memo
        inference.budget = Budget(deadline=math.inf)
        return memo, inference

    def outer(memo: AskedOnce):
        return lambda: memo(("inner",), inner, (inner_node, helper)) + " and outer"

    memo, _ = analysis("a.py")
    with workspace.recording() as first:
        memo(("inner",), inner, (inner_node, helper))  # worked out first, on its own
        memo(("outer",), outer(memo), (outer_node, helper))  # reuses it from a.py's memo
    memo, _ = analysis("b.py")
    with workspace.recording() as second:
        assert memo(("outer",), outer(memo), (outer_node, helper)) == "inner and outer"  # shared
    assert base in first.paths and base in second.paths
