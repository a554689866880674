"""``is_plain``: the values the evaluator can only make plain, read from the syntax alone.

FAB002's walk through a helper's body skips evaluating the receiver of ``path.exists()`` when it
is plain (no method of a string or a number is a collective). The walk stays exact only while
``is_plain`` never holds for an expression the evaluator can make an object of: the property
test below builds functions that bind a name in every way Python can, and checks that whenever
``is_plain`` holds, the evaluator gives the name, and its attribute, plain values only.
"""

from __future__ import annotations

import ast
import textwrap

import pytest
from fabric_lsp.engine.program.infer import Inference, is_plain
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.python.values import Const, DictVal, Seq, Unknown
from hypothesis import example, given, settings
from hypothesis import strategies as st

PLAIN_VALUES = (Const, Unknown, Seq, DictVal)

#: ways a function's body can bind ``x``: a plain assignment, and every other binding
PLAIN_BINDINGS = ['x = "a"', 'x = f"{p}"', 'x = p / "a"', "x = -1", "x = p == 1", "x = y = p * 2"]
OTHER_BINDINGS = [
    "x = p",
    "x = dist",
    "x = Path(p)",
    "x = dist if p else 1",
    "x = p or 1",
    "import torch.distributed as x",
    "from torch import distributed as x",
    "for x in p: pass",
    "with open(p) as x: pass",
    "x += 1",
    "x: Model = p",
    "(x := dist)",
    "x, y = dist, 1",
    "def x(): pass",
    "class x: pass",
    "global x",
    "del x",
    "try:\n    pass\nexcept E as x:\n    pass",
    "[x for x in p]",
    "match p:\n    case [*x]:\n        pass",
    "match p:\n    case {**x}:\n        pass",
    "match p:\n    case q as x:\n        pass",
    "def g(a=(x := dist)): pass",
    "h = lambda a=(x := dist): a",
    "def g():\n    nonlocal x\n    x = dist",
]
PREAMBLE = "import torch.distributed as dist\nfrom pathlib import Path\nx = dist\n"


def _function(statements: list[str], use_at: int, guarded: list[bool], param: bool) -> str:
    lines = []
    for i, (stmt, under_if) in enumerate(zip(statements, guarded)):
        if i == use_at:
            lines.append("x.barrier()")
        lines.append(f"if p:\n{textwrap.indent(stmt, '    ')}" if under_if else stmt)
    if use_at >= len(statements):
        lines.append("x.barrier()")
    params = "p, x" if param else "p"
    return PREAMBLE + f"def f({params}):\n" + textwrap.indent("\n".join(lines) or "pass", "    ") + "\n"


def _use(module: ModuleInfo) -> ast.Call:
    return next(n for n in ast.walk(module.tree) if isinstance(n, ast.Call) and ast.unparse(n) == "x.barrier()")


@st.composite
def functions(draw):
    statements = draw(st.lists(st.sampled_from(PLAIN_BINDINGS + OTHER_BINDINGS), max_size=5))
    use_at = draw(st.integers(0, len(statements)))
    guarded = draw(st.lists(st.booleans(), min_size=len(statements), max_size=len(statements)))
    return _function(statements, use_at, guarded, draw(st.booleans()))


@settings(max_examples=300, deadline=None)
@given(functions())
@example(_function(['x = p / "a"'], 1, [False], False))
@example(_function(['x = p / "a"', "for x in p: pass"], 2, [False, True], False))
@example(_function(['x = p / "a"', "import torch.distributed as x"], 2, [False, True], False))
@example(_function(['x = p / "a"'], 0, [False], True))
@example(_function(['x = "a"', "x = dist"], 2, [False, True], False))
def test_a_plain_value_is_never_an_object(source):
    module = ModuleInfo(source, None)
    call = _use(module)
    receiver = call.func.value  # type: ignore[attr-defined]
    if not is_plain(receiver, module):
        return
    inference = Inference()
    values = inference.evaluate(receiver, module)
    assert values and all(isinstance(v, PLAIN_VALUES) for v in values), (source, values)
    assert all(isinstance(v, Unknown) for v in inference.evaluate(call.func, module)), source


@pytest.mark.parametrize(
    "body",
    [
        'path = root / "config.json"\nif path.exists():\n    pass',
        'name = f"{root}.yaml"\nname.endswith(".yaml")',
        "a = b = root * 2\na.bit_length()",
        '(root / "lit_model.pth").is_file()',
        '", ".join(root)',
    ],
)
def test_plain(body):
    module = ModuleInfo(f"def f(root):\n{textwrap.indent(body, '    ')}\n", None)
    call = next(n for n in ast.walk(module.tree) if isinstance(n, ast.Call))
    assert is_plain(call.func.value, module)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "source",
    [
        "def f(path):\n    path.exists()\n",  # a parameter: its callers decide
        'def f(root):\n    path = root / "a"\n    for path in root:\n        pass\n    path.exists()\n',
        'def f(root):\n    path = root / "a"\n    path = Path(root)\n    path.exists()\n',
        'import os\ndef f(root):\n    path = "a"\n    def g():\n        path.exists()\n',  # read from a nested function
        'path = "a"\ndef f(root):\n    path.exists()\n',  # a global
        'path = "a"\npath.exists()\n',  # module level
        "def f(root):\n    root.path.exists()\n",
        'def f(root):\n    path = "a"\n    def g(a=(path := root)):\n        pass\n    path.exists()\n',
    ],
)
def test_not_plain(source):
    module = ModuleInfo(source, None)
    call = next(n for n in ast.walk(module.tree) if isinstance(n, ast.Call) and ast.unparse(n).endswith(".exists()"))
    assert not is_plain(call.func.value, module)  # type: ignore[attr-defined]
