"""Which helper bodies FAB002's walk goes into (engine/semantic/collectives.py): the workspace's own
code always; a function of an installed package only where it can reach a collective — its
module names one, or the call hands it something its body calls."""

from __future__ import annotations

import ast
import textwrap

import pytest
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.python.values import FuncRef
from fabric_lsp.engine.semantic.collectives import _may_reach_from
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.engine.workspace.workspace import Workspace

CALLER = "pbar.update(n)\nrun(model, x)\nbar.close()\n"


def _walked(tmp_path, library: str, function: str, call_text: str, inside: bool) -> bool:
    project = tmp_path / "project"
    project.mkdir()
    folder = project if inside else tmp_path / "site-packages"
    folder.mkdir(exist_ok=True)
    lib = ModuleInfo(textwrap.dedent(library), str(folder / "lib.py"), "lib")
    node = next(n for n in ast.walk(lib.tree) if isinstance(n, ast.FunctionDef) and n.name == function)
    caller = ModuleInfo(CALLER, str(project / "train.py"), "train")
    call = next(n for n in ast.walk(caller.tree) if isinstance(n, ast.Call) and ast.unparse(n) == call_text)
    return _may_reach_from(SemanticModel(caller, Workspace(str(project))), call, FuncRef(node, lib))


TQDM = """
class tqdm:
    def update(self, n=1):
        self.n += n
        self._time()

    def close(self):
        self.display(pos=0)
"""

RUNNER = """
def run(model, x):
    return model(x)
"""


@pytest.mark.parametrize(("function", "call"), [("update", "pbar.update(n)"), ("close", "bar.close()")])
def test_an_installed_helper_that_calls_nothing_it_is_handed_is_not_walked(tmp_path, function, call):
    assert not _walked(tmp_path, TQDM, function, call, inside=False)


def test_the_same_helper_in_the_workspace_is_walked(tmp_path):
    assert _walked(tmp_path, TQDM, "close", "bar.close()", inside=True)


def test_an_installed_helper_that_calls_what_it_is_handed_is_walked(tmp_path):
    assert _walked(tmp_path, RUNNER, "run", "run(model, x)", inside=False)


@pytest.mark.parametrize(
    "line",
    ["import torch.distributed as dist", "from .comm import all_reduce\nall_reduce(t)", "from lightning import Fabric"],
)
def test_an_installed_module_that_names_a_collective_is_walked(tmp_path, line):
    assert _walked(tmp_path, TQDM + line + "\n", "close", "bar.close()", inside=False)
