"""``astwalk`` gives the nodes :func:`ast.walk` and :func:`ast.iter_child_nodes` give, in their
order (the analyses depend on the order: "the first assignment", "in the order ast.walk meets
them"), on every module of fabric-lsp itself, of the bundled corpus and of a sample of the
standard library, and on every node of them."""

from __future__ import annotations

import ast
import sysconfig
from pathlib import Path

import pytest
from fabric_lsp.engine.python.astwalk import NODE_FIELDS, children, walk

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([*(ROOT / "server" / "fabric_lsp").rglob("*.py"), *(ROOT / "tests" / "corpus").rglob("*.py")])


def test_there_are_sources_to_compare():
    assert len(SOURCES) > 200


#: a sample of the running interpreter's standard library: every construct of its grammar
#: (type comments, ``match``, and the type parameters of Python 3.12 on), on what :data:`NODE_FIELDS`
#: leaves out of each node
STDLIB = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if ROOT in path.parents else f"stdlib/{path.name}"


@pytest.mark.parametrize("path", [*SOURCES[::7], *STDLIB[::4]], ids=_shown)
def test_the_same_nodes_in_the_same_order(path):
    tree = ast.parse(path.read_text(encoding="utf-8"), type_comments=True)
    nodes = walk(tree)
    assert [id(n) for n in nodes] == [id(n) for n in ast.walk(tree)]
    for node in nodes:
        assert [id(c) for c in children(node)] == [id(c) for c in ast.iter_child_nodes(node)]
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.expr)):
            assert [id(n) for n in walk(node)] == [id(n) for n in ast.walk(node)]


def test_the_fields_that_hold_nodes():
    assert NODE_FIELDS[ast.Name] == ("ctx",) and NODE_FIELDS[ast.Attribute] == ("value", "ctx")
    assert NODE_FIELDS[ast.Constant] == () and NODE_FIELDS[ast.Global] == ()
    assert NODE_FIELDS[ast.ImportFrom] == ("names",) and NODE_FIELDS[ast.keyword] == ("value",)
    assert "name" not in NODE_FIELDS[ast.FunctionDef] and "body" in NODE_FIELDS[ast.FunctionDef]


def test_a_node_of_a_class_made_after_the_walker():
    class Block(ast.Module):
        pass

    inner = ast.Expr(ast.Call(ast.Name("f", ast.Load()), [ast.Constant(1)], []))
    block = Block(body=[inner], type_ignores=[])
    assert [id(n) for n in walk(block)] == [id(n) for n in ast.walk(block)] and children(block) == [inner]


@pytest.mark.parametrize("path", [*SOURCES[3::9], *STDLIB[1::9]], ids=_shown)
def test_a_module_s_statement_walk_finds_every_parent_call_load_and_class(path):
    from fabric_lsp.engine.python.modules import ModuleInfo

    m = ModuleInfo(path.read_text(encoding="utf-8"))
    assert m.tree is not None and m.parsed.clean
    for top in m.tree.body:
        m._walk_top(top)
    nodes = [n for top in m.tree.body for n in ast.walk(top)]
    for node in nodes:
        for child in ast.iter_child_nodes(node):
            if child._fields or child.__dict__:  # a context or an operator is one node shared by all
                assert m._parents[child] is node
    calls = {id(n) for n in nodes if isinstance(n, ast.Call)}
    loads = {id(n) for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    classes = {id(n) for n in nodes if isinstance(n, ast.ClassDef)}
    assert {id(c) for found in m._top_calls.values() for c in found} == calls
    assert {id(n) for found in m._top_loads.values() for n in found} == loads
    assert {id(n) for found in m._top_class_nodes.values() for n in found} == classes


def test_a_lone_node_and_a_node_without_children():
    name = ast.Name("x", ast.Load())
    assert walk(name) == [name, name.ctx] and children(name) == [name.ctx]
    empty = ast.Pass()
    assert walk(empty) == [empty] and children(empty) == []


@pytest.mark.parametrize("path", SOURCES[::3], ids=lambda p: str(p.relative_to(ROOT)))
def test_a_scope_s_names_from_its_statements_alone(path):
    # without an assignment expression, a scope's statements hold every name it binds
    from fabric_lsp.engine.python.modules import _scope_names

    text = path.read_text(encoding="utf-8")
    if ":=" in text:
        return
    tree = ast.parse(text)
    for scope in walk(tree):
        if isinstance(scope, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            assert _scope_names(scope, statements_only=True) == _scope_names(scope), ast.dump(scope)[:200]


def test_scope_names_from_statements_on_every_binding_form():
    text = """
def f(a, /, b, *c, d, **e):
    global g
    nonlocal_ = 1
    x, (y, *z) = w = 1
    q: int = 2
    r += 1
    for s, t in u: pass
    async def h(): pass
    with open(p) as v, open(p) as (k1, k2): pass
    try: pass
    except E as err: del dead
    else: import os.path as op, sys
    finally: from m import n as nn, o
    while 0:
        if 1:
            class C: pass
        else:
            m2[i] = m3.attr = 4
    match s:
        case 1: matched = 1
    lam = lambda inner: inner
    comp = [c2 for c2 in u]
"""
    from fabric_lsp.engine.python.modules import _scope_names

    func = ast.parse(text).body[0]
    assert _scope_names(func, statements_only=True) == _scope_names(func)
    names, globals_ = _scope_names(func, statements_only=True)
    assert {
        "a",
        "b",
        "c",
        "d",
        "e",
        "x",
        "y",
        "z",
        "w",
        "q",
        "r",
        "s",
        "t",
        "h",
        "v",
        "k1",
        "k2",
        "err",
        "dead",
    } <= names
    assert {"op", "sys", "nn", "o", "C", "matched", "lam", "comp"} <= names and globals_ == {"g"}
    assert not {"g", "inner", "c2", "m2", "m3", "i", "p", "u"} & names


@pytest.mark.parametrize("path", SOURCES[1::3], ids=lambda p: str(p.relative_to(ROOT)))
def test_a_scope_s_assignments_from_its_statements_alone(path):
    # without an assignment expression, the assignments own_nodes meets are statements, met in
    # the same order by own_statements (with and without the no-grad blocks)
    from fabric_lsp.engine.program.setups import _assignments, own_nodes, own_statements

    text = path.read_text(encoding="utf-8")
    if ":=" in text:
        return
    for scope in walk(ast.parse(text)):
        if isinstance(scope, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for grad_only in (False, True):
                full = [n for n in own_nodes(scope, grad_only) if _assignments(n)]
                assert [n for n in own_statements(scope, grad_only) if _assignments(n)] == full


def test_a_module_with_an_assignment_expression_walks_every_node():
    from fabric_lsp.engine.program.setups import assigned_values
    from fabric_lsp.engine.python.modules import ModuleInfo

    m = ModuleInfo("def f(xs):\n    if (n := len(xs)) > 1:\n        model = xs\n    return model, n\n")
    func = m.tree.body[0]
    assert m.binds_in_expressions and [ast.unparse(v) for v in assigned_values(func, "n", m=m)] == ["len(xs)"]
    plain = ModuleInfo(
        "def f(xs):\n    try:\n        a = 1\n    except E:\n        a = 2\n    else:\n        a = 3\n    finally:\n        a = 4\n"
    )
    assert not plain.binds_in_expressions
    assert [ast.unparse(v) for v in assigned_values(plain.tree.body[0], "a", m=plain)] == ["1", "2", "3", "4"]


@pytest.mark.parametrize("path", SOURCES[2::3], ids=lambda p: str(p.relative_to(ROOT)))
def test_a_function_s_returns_from_its_statements_alone(path):
    # the walk that entered every node met the same return statements in the same order
    from fabric_lsp.engine.python.bindings import returns_of

    def every_node(func):
        stack = list(func.body)
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Return):
                yield node
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.extend(ast.iter_child_nodes(node))

    for func in walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            assert list(returns_of(func)) == list(every_node(func))


@pytest.mark.parametrize("path", SOURCES[::5], ids=lambda p: str(p.relative_to(ROOT)))
def test_statements_are_the_walk_s_statements_in_its_order(path):
    from fabric_lsp.engine.python.astwalk import block_children, statements

    blocks = (ast.stmt, ast.excepthandler, ast.match_case)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in [tree, *(n for n in walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.If)))]:
        expected = [node, *(n for n in ast.walk(node) if n is not node and isinstance(n, blocks))]
        assert [id(n) for n in statements(node)] == [id(n) for n in expected]
        assert [id(n) for n in block_children(node)] == [
            id(c) for c in ast.iter_child_nodes(node) if isinstance(c, blocks)
        ]
