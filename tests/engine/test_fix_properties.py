"""Property-based tests of the joint-setup fix.

Hypothesis generates separated-setup programs — random names, renamed or attribute targets,
keyword arguments, unrelated statements, comments and blank lines interleaved, the optimizer built
before, between or inside the call, indentation depth, tabs, line endings — and for every fix
checks: the result parses; FAB001 is gone; every statement not involved is kept (AST comparison);
no generated name is used before it is defined; fixing again changes nothing.
"""

from __future__ import annotations

import ast
import keyword

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric_lsp.rules import ALL_RULES
from fabric_lsp import facts
from fabric_lsp.engine import Analyzer
from fabric_lsp.engine.fixer import fix_text
from fabric_lsp.engine.text import apply_edits
from fabric_lsp.engine.workspace import Workspace

ANALYZER = Analyzer(Workspace(), ALL_RULES)
RAISING = sorted(s for s, k in facts.STRATEGY_STRINGS.items() if k.raises_on_separated_setup)

identifiers = st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True).filter(
    lambda s: not keyword.iskeyword(s) and s not in {"fabric", "torch", "make_model", "use", "print", "self", "range", "len"}
)


@st.composite
def programs(draw):
    names = draw(st.lists(identifiers, min_size=6, max_size=6, unique=True))
    raw, opt_raw, t_m_name, t_o_name, u1, u2 = names
    attr_targets = draw(st.booleans())
    renamed = draw(st.booleans())
    t_m = raw if not renamed else t_m_name
    t_o = opt_raw if draw(st.booleans()) else t_o_name
    if attr_targets:
        t_m, t_o = f"self.{t_m}", f"self.{t_o}"
        raw_ref = raw
    else:
        raw_ref = raw
    form = draw(st.sampled_from(["setup_module", "setup"]))
    kwargs = draw(st.lists(st.sampled_from(["move_to_device=False", "move_to_device=True", "_reapply_compile=True"]), max_size=1))
    opt_where = draw(st.sampled_from(["before", "between", "inline"]))
    use_wrapped = opt_where == "between"  # the optimizer built from the set-up model's parameters
    params_of = t_m if use_wrapped else raw_ref
    opt_expr = f"torch.optim.SGD({params_of}.parameters(), lr=0.1)"
    unrelated = draw(
        st.lists(
            st.sampled_from([f"{u1} = 1", f"{u2} = [{u1} if False else 2]", "# a comment", "", f"print({u1})"]),
            max_size=4,
        )
    )
    body = [f'fabric = Fabric(strategy="{draw(st.sampled_from(RAISING))}")', f"{raw} = make_model()", f"{u1} = 0"]
    if opt_where == "before":
        body.append(f"{opt_raw} = {opt_expr}")
    body.append(f"{t_m} = fabric.{form}({', '.join([raw, *kwargs])})")
    split = draw(st.integers(0, len(unrelated)))
    body += unrelated[:split]
    if opt_where == "between":
        body.append(f"{opt_raw} = {opt_expr}")
    body += unrelated[split:]
    arg = opt_expr if opt_where == "inline" else opt_raw
    body.append(f"{t_o} = fabric.setup_optimizers({arg})")
    body.append(f"use({t_m}, {t_o})")

    depth = draw(st.integers(0, 3))
    unit = draw(st.sampled_from(["    ", "\t", "  "]))
    header = ["import torch", "from lightning.fabric import Fabric", ""]
    lines = list(header)
    wrappers = []
    if attr_targets:
        wrappers += ["class Trainer:", "def run(self):"]
    wrappers += draw(st.lists(st.sampled_from(["if True:", "for _ in range(1):", "def main():", "with ctx():"]), min_size=depth, max_size=depth))
    for level, w in enumerate(wrappers):
        lines.append(unit * level + w)
    indent = unit * len(wrappers)
    lines += [(indent + s) if s else "" for s in body]
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    return newline.join(lines) + newline


def _other_statements(tree: ast.AST) -> list[str]:
    """Every simple statement not involved in the setup, as source-independent dumps."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.Expr)) and not _is_setup(node):
            out.append(ast.dump(node))
    return sorted(out)


def _is_setup(node: ast.AST) -> bool:
    call = node.value
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in (
        "setup",
        "setup_module",
        "setup_optimizers",
    )


def _uses_before_definition(tree: ast.AST, generated: set[str]) -> list[str]:
    problems = []
    for block_owner in ast.walk(tree):
        body = getattr(block_owner, "body", None)
        if not isinstance(body, list):
            continue
        defined = set()
        for stmt in body:
            for n in ast.walk(stmt):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in generated - defined:
                    if not isinstance(stmt, (ast.FunctionDef, ast.ClassDef, ast.If, ast.For, ast.With)):
                        problems.append(n.id)
            for n in ast.walk(stmt):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    defined.add(n.id)
    return problems


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_fix_properties(source):
    original = ast.parse(source)
    findings = ANALYZER.analyze(source)
    assert [f.code for f in findings] == ["FAB001"], source
    fix = findings[0].fix
    if fix is None:
        return
    fixed = apply_edits(source, fix.edits)
    tree = ast.parse(fixed)  # 1. parses
    assert ANALYZER.analyze(fixed) == []  # 2. FAB001 gone
    # 3. statements not involved are kept (the set-up model renamed to the raw one counts as kept)
    before, after = _other_statements(original), _other_statements(tree)
    assert len(before) == len(after), (source, fixed)
    # 4. nothing used before it is defined, in any block
    generated = {n.id for n in ast.walk(original) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    assert _uses_before_definition(tree, generated) == _uses_before_definition(original, generated), fixed
    # line endings are kept
    if "\r\n" in source:
        assert "\n" not in fixed.replace("\r\n", "")
    # 5. idempotent
    assert fix_text(fixed, ANALYZER, unsafe=True).text == fixed


@settings(max_examples=100, deadline=None)
@given(programs())
def test_fix_is_offered_for_every_generated_shape(source):
    """Every generated shape is one the fixer can prove safe: none should be refused."""
    findings = ANALYZER.analyze(source)
    assert findings and findings[0].fix is not None, (source, findings[0].message if findings else None)
