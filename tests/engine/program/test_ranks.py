"""engine/python/flow.py and engine/program/ranks.py: which conditions hold at a node, and is it reached on some
ranks only."""

from __future__ import annotations

import ast
import textwrap

import pytest
from fabric_lsp.engine.program.ranks import paired, rank_guard, restricts_ranks
from fabric_lsp.engine.python.flow import conditions, conditions_at
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.workspace.workspace import Workspace


def module_of(src: str) -> ModuleInfo:
    return ModuleInfo(textwrap.dedent(src).lstrip("\n"), path=None)


def call_named(module: ModuleInfo, attr: str, nth: int = 0) -> ast.Call:
    calls = [
        n
        for n in ast.walk(module.tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == attr
    ]
    calls.sort(key=lambda c: (c.lineno, c.col_offset))
    return calls[nth]


def test_conditions_of_branches_exits_asserts_and_expressions():
    m = module_of(
        """
        def f(a, b, c, d):
            assert d
            if a:
                return
            if b:
                pass
            else:
                x = c and g.save()
        """
    )
    got = [(ast.unparse(c.test), c.truth, c.how) for c in conditions_at(m, call_named(m, "save"))]
    assert got == [("c", True, "expression"), ("b", False, "branch"), ("a", False, "exit"), ("d", True, "assert")]
    # the statement-level pairs FAB001's guards read
    assert [(ast.unparse(t), v) for t, v in conditions(m, call_named(m, "save"))] == [
        ("b", False),
        ("a", False),
        ("d", True),
    ]


def test_conditions_stop_at_the_function():
    m = module_of(
        """
        if outer:
            def f():
                g.save()
        """
    )
    assert list(conditions_at(m, call_named(m, "save"))) == []


@pytest.mark.parametrize(
    "test, truth, expected",
    [
        ("fabric.global_rank == 0", True, True),
        ("fabric.global_rank == 0", False, True),  # rank != 0: rank 0 is left out
        ("fabric.is_global_zero", True, True),
        ("not self.fabric.is_global_zero", True, True),
        ("fabric.local_rank == 0", True, True),
        ("0 == fabric.node_rank", True, True),
        ("rank_zero_only.rank == 0", True, True),
        ("dist.get_rank() == 0", True, True),
        ('int(os.environ["LOCAL_RANK"]) == 0', True, True),
        ("fabric.global_rank", True, True),
        ("fabric.global_rank >= 0", True, False),  # every rank
        ("fabric.world_size > 1", True, False),
        ("fabric.global_rank == 0 and epoch % 5 == 0", True, True),
        ("fabric.global_rank == 0 and epoch % 5 == 0", False, False),
        ("fabric.world_size == 1 or fabric.global_rank == 0", True, True),
        ("debug or fabric.global_rank == 0", True, False),
        ("debug or fabric.global_rank == 0", False, True),
        ("args.verbose", True, False),
        ("fabric.is_global_zero == True", True, True),
    ],
)
def test_rank_tests(test, truth, expected):
    m = module_of(f"x = {test}\n")
    expr = m.tree.body[0].value
    assert restricts_ranks(m, expr, truth) is expected


def test_a_name_bound_to_a_rank():
    m = module_of(
        """
        def f(fabric):
            rank = fabric.global_rank
            if rank == 0:
                fabric.save("p", {})
        """
    )
    guard = rank_guard(m, call_named(m, "save"))
    assert guard is not None and guard.how == "branch" and guard.text == "rank == 0"


def test_a_parameter_named_rank_is_not_a_rank():
    m = module_of(
        """
        def f(fabric, rank):
            if rank == 0:
                fabric.save("p", {})
        """
    )
    assert rank_guard(m, call_named(m, "save")) is None


def test_rank_zero_only_and_rank_zero_first():
    m = module_of(
        """
        from lightning.fabric.utilities import rank_zero_only

        @rank_zero_only
        def log(fabric):
            fabric.barrier()

        with fabric.rank_zero_first(local=True):
            fabric.save("p", {})
        """
    )
    assert rank_guard(m, call_named(m, "barrier")).how == "decorator"
    assert rank_guard(m, call_named(m, "save")).how == "rank_zero_first"


def test_a_function_only_called_on_some_ranks():
    m = module_of(
        """
        def save_all(fabric, state):
            fabric.save("p", state)

        def loop(fabric, state):
            if fabric.is_global_zero:
                save_all(fabric, state)
            if fabric.global_rank == 0:
                save_all(fabric, state)
        """
    )
    guard = rank_guard(m, call_named(m, "save"))
    assert guard is not None and guard.how == "callers" and len(guard.callers) == 2


def test_one_unguarded_caller_or_a_reference_is_enough_to_reach_every_rank():
    unguarded = module_of(
        """
        def save_all(fabric):
            fabric.save("p", {})

        if fabric.is_global_zero:
            save_all(fabric)
        save_all(fabric)
        """
    )
    assert rank_guard(unguarded, call_named(unguarded, "save")) is None
    escaped = module_of(
        """
        def save_all(fabric):
            fabric.save("p", {})

        if fabric.is_global_zero:
            save_all(fabric)
        callbacks = [save_all]
        """
    )
    assert rank_guard(escaped, call_named(escaped, "save")) is None


def test_a_function_named_in_another_module_may_be_called_there(tmp_path):
    (tmp_path / "helpers.py").write_text(
        "def save_all(fabric):\n    fabric.save('p', {})\n\nif fabric.is_global_zero:\n    save_all(fabric)\n"
    )
    (tmp_path / "train.py").write_text("from helpers import save_all\nsave_all(fabric)\n")
    ws = Workspace(root=str(tmp_path))
    m = ws.load_path(str(tmp_path / "helpers.py"))
    assert rank_guard(m, call_named(m, "save")) is not None  # without the workspace: this module only
    assert rank_guard(m, call_named(m, "save"), ws) is None


def test_paired_barriers():
    m = module_of(
        """
        if fabric.global_rank != 0:
            fabric.barrier()
        work()
        if fabric.global_rank == 0:
            fabric.barrier()
        if fabric.is_global_zero:
            fabric.save("p", {})
        else:
            fabric.barrier()
        if fabric.is_global_zero:
            fabric.all_reduce(x)
        """
    )
    first = call_named(m, "barrier")
    assert paired(m, first, rank_guard(m, first), ("save", "load", "barrier"))
    save = call_named(m, "save")
    assert paired(m, save, rank_guard(m, save), ("save", "load", "barrier"))
    reduce = call_named(m, "all_reduce")
    assert not paired(m, reduce, rank_guard(m, reduce), ("all_reduce",))


def test_a_block_s_guard_is_worked_out_once_for_all_its_calls(monkeypatch):
    from fabric_lsp.engine.program import ranks

    lines = "\n".join(f"                fabric.log_{i}(x)" for i in range(20))
    module = module_of(
        f"""
        def train(fabric, x):
            if x is None:
                return
            if fabric.global_rank == 0:
{lines}
            fabric.after(x)
        """
    )
    asked = []
    real = ranks.restricts_ranks
    monkeypatch.setattr(
        ranks,
        "restricts_ranks",
        lambda m, test, truth, depth=0: asked.append(ast.dump(test)) or real(m, test, truth, depth),
    )
    guards = [rank_guard(module, call_named(module, f"log_{i}")) for i in range(20)]
    assert all(g is not None and ast.unparse(g.node) == "fabric.global_rank == 0" for g in guards)
    assert rank_guard(module, call_named(module, "after")) is None
    assert len(asked) == len(set(asked)) == 2  # each test once: the rank test, the early exit
    # the same answers as walking every condition anew
    assert [g.node for g in guards] == [
        next(c for c in conditions_at(module, call_named(module, f"log_{i}")) if real(module, c.test, c.truth)).test
        for i in range(20)
    ]
