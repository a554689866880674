"""``astwalk`` gives the nodes :func:`ast.walk` and :func:`ast.iter_child_nodes` give, in their
order (the analyses depend on the order: "the first assignment", "in the order ast.walk meets
them"), on every module of fabric-lsp itself and of the bundled corpus, and on every node of them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from fabric_lsp.engine.python.astwalk import children, walk

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([*(ROOT / "server" / "fabric_lsp").rglob("*.py"), *(ROOT / "tests" / "corpus").rglob("*.py")])


def test_there_are_sources_to_compare():
    assert len(SOURCES) > 200


@pytest.mark.parametrize("path", SOURCES[::7], ids=lambda p: str(p.relative_to(ROOT)))
def test_the_same_nodes_in_the_same_order(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = walk(tree)
    assert [id(n) for n in nodes] == [id(n) for n in ast.walk(tree)]
    for node in nodes:
        assert [id(c) for c in children(node)] == [id(c) for c in ast.iter_child_nodes(node)]
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.expr)):
            assert [id(n) for n in walk(node)] == [id(n) for n in ast.walk(node)]


def test_a_lone_node_and_a_node_without_children():
    name = ast.Name("x", ast.Load())
    assert walk(name) == [name, name.ctx] and children(name) == [name.ctx]
    empty = ast.Pass()
    assert walk(empty) == [empty] and children(empty) == []
