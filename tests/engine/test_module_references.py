"""``ModuleInfo.references`` finds a name's references in the statements that mention it, in
the order a walk of the whole module meets them (FAB002 names the callers' tests in that
order)."""

from __future__ import annotations

import ast
import pathlib

import pytest
from fabric_lsp.engine.python.modules import ModuleInfo

SOURCES = sorted((pathlib.Path(__file__).parents[2] / "server" / "fabric_lsp").rglob("*.py"))


def _walked(module: ModuleInfo, name: str) -> list[ast.AST]:
    return [
        n
        for n in ast.walk(module.tree)
        if isinstance(n, ast.Name)
        and n.id == name
        and isinstance(n.ctx, ast.Load)
        or isinstance(n, ast.Attribute)
        and n.attr == name
    ]


@pytest.mark.parametrize("path", SOURCES[::14], ids=lambda p: p.name)
def test_references_are_those_of_a_walk_of_the_whole_module(path):
    module = ModuleInfo(path.read_text(encoding="utf-8"), str(path))
    for name in module.index:
        assert module.references(name) == _walked(module, name), name


def test_references_at_several_depths_across_statements():
    source = "def f():\n    g(x.g)\n\nclass C:\n    def m(self):\n        return g\n\ng = h(g)\n"
    module = ModuleInfo(source, None)
    found = module.references("g")
    assert found == _walked(module, "g") and len(found) == 4
    assert [n.lineno for n in found] == [8, 2, 2, 6]  # by depth first, then statement
