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

from fabric_lsp import facts
from fabric_lsp.engine import Analyzer
from fabric_lsp.engine.fixer import fix_text
from fabric_lsp.engine.python.text import apply_edits
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import ALL_RULES, RULES_BY_CODE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ANALYZER = Analyzer(Workspace(), [RULES_BY_CODE["FAB001"]])  # FAB001's fix (FAB007 also reports the missing launch)
ALL_RULES_ANALYZER = Analyzer(Workspace(), ALL_RULES)
RAISING = sorted(s for s, k in facts.STRATEGY_STRINGS.items() if k.raises_on_separated_setup)

identifiers = st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True).filter(
    lambda s: (
        not keyword.iskeyword(s) and s not in {"fabric", "torch", "make_model", "use", "print", "self", "range", "len"}
    )
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
    kwargs = draw(
        st.lists(st.sampled_from(["move_to_device=False", "move_to_device=True", "_reapply_compile=True"]), max_size=1)
    )
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
    wrappers += draw(
        st.lists(
            st.sampled_from(["if True:", "for _ in range(1):", "def main():", "with ctx():"]),
            min_size=depth,
            max_size=depth,
        )
    )
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
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr
        in (
            "setup",
            "setup_module",
            "setup_optimizers",
        )
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
                if (
                    isinstance(n, ast.Name)
                    and isinstance(n.ctx, ast.Load)
                    and n.id in generated - defined
                    and not isinstance(stmt, (ast.FunctionDef, ast.ClassDef, ast.If, ast.For, ast.With))
                ):
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


# -- fix safety across every strategy the code can choose ---------------------------------------
# Lightning 2.6.6's behaviour under joint setup, written out here independently of facts.py:
# (expression, joint setup accepted: True/False/None for "cannot be told", joint setup refuses an
# optimizer over meta-device parameters)
BRANCHES = [
    ('"deepspeed"', True, False),
    ('"deepspeed_stage_3"', True, False),
    ("DeepSpeedStrategy(stage=2)", True, False),
    ('"xla"', True, False),
    ('"ddp"', True, False),
    ('"fsdp"', True, True),
    ('"fsdp_cpu_offload"', True, True),
    ("FSDPStrategy()", True, True),
    ("FSDPStrategy(use_orig_params=True)", True, True),
    ("FSDPStrategy(use_orig_params=False)", False, True),  # ValueError in setup_module_and_optimizers
    ("FSDPStrategy(use_orig_params=flag)", None, True),
    ("FSDPStrategy(**fsdp_kwargs)", None, True),
    ('"xla_fsdp"', False, False),  # NotImplementedError
    ("ModelParallelStrategy(parallelize_fn=parallelize)", False, False),  # optimizer keeps the old parameters
    ("args.strategy", None, True),
    ("ClusterStrategy()", None, False),  # a project's ParallelStrategy: not an FSDPStrategy for _validate_setup
]
RAISING_BRANCHES = [b for b in BRANCHES if "deepspeed" in b[0].lower() or b[0] == '"xla"']


@st.composite
def strategy_programs(draw):
    raising = draw(st.sampled_from(RAISING_BRANCHES))
    others = draw(st.lists(st.sampled_from(BRANCHES), min_size=0, max_size=3))
    branches = [raising, *others]
    draw(st.randoms()).shuffle(branches)
    meta = draw(st.sampled_from(["", "True", "False", "None", "cfg.empty"]))
    lines = [
        "import torch",
        "from lightning.fabric import Fabric",
        "from lightning.fabric.strategies import DeepSpeedStrategy, FSDPStrategy, ModelParallelStrategy, ParallelStrategy",
        "",
        "class ClusterStrategy(ParallelStrategy):",
        "    pass",
        "",
    ]
    for i, (expr, _, _) in enumerate(branches):
        keyword = "if" if i == 0 else "elif" if i < len(branches) - 1 else "else"
        lines.append(f"{keyword} mode == {i}:" if keyword != "else" else "else:")
        lines.append(f"    strategy = {expr}")
    if len(branches) == 1:
        lines = lines[:-2] + [f"strategy = {branches[0][0]}"]
    lines += ["fabric = Fabric(strategy=strategy)", "fabric.launch()"]
    if meta:
        lines += [f"with fabric.init_module(empty_init={meta}):", "    model = torch.nn.Linear(4, 2)"]
    else:
        lines.append("model = torch.nn.Linear(4, 2)")
    lines += _setup_lines(draw(st.sampled_from(OPTIMIZER_PLACES)))
    return "\n".join(lines) + "\n", branches, meta not in ("", "False", "None")


#: where the optimizer is built: before the module setup (from the raw model), between the two
#: calls from the set-up model, or between them from the raw model (a renamed target). The
#: rewrite builds it before the joint setup in every case, so on a meta-device model it holds
#: meta-device parameters there whichever place it had.
OPTIMIZER_PLACES = ("before", "between_set_up", "between_raw")


def _setup_lines(place: str) -> list[str]:
    build = "optimizer = torch.optim.AdamW({}.parameters(), lr=1e-4)"
    if place == "before":
        return [
            build.format("model"),
            "model = fabric.setup_module(model)",
            "optimizer = fabric.setup_optimizers(optimizer)",
        ]
    if place == "between_raw":
        return [
            "wrapped = fabric.setup_module(model)",
            build.format("model"),
            "optimizer = fabric.setup_optimizers(optimizer)",
        ]
    return [
        "model = fabric.setup_module(model)",
        build.format("model"),
        "optimizer = fabric.setup_optimizers(optimizer)",
    ]


def _expected_applicability(branches, meta: bool):
    if any(ok is False for _, ok, _ in branches):
        return None
    if meta and any(refuses_meta for _, _, refuses_meta in branches):
        return None
    return "unsafe" if any(ok is None for _, ok, _ in branches) else "safe"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strategy_programs())
def test_fix_is_safe_only_where_every_branch_accepts_joint_setup(program):
    source, branches, meta = program
    findings = ANALYZER.analyze(source)
    assert [f.code for f in findings] == ["FAB001"], source
    expected = _expected_applicability(branches, meta)
    fix = findings[0].fix
    assert (fix.applicability.value if fix else None) == expected, (source, findings[0].message)
    if fix is None:
        assert "No automatic fix:" in findings[0].message
    elif fix.applicability.value == "safe":
        # a safe joint setup is right on every branch: no rule finds the joint setup failing
        fixed = apply_edits(source, fix.edits)
        assert [f for f in ALL_RULES_ANALYZER.analyze(fixed) if f.code in ("FAB001", "FAB009")] == [], fixed


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(identifiers, identifiers, st.sampled_from(RAISING), st.sampled_from(["", ", move_to_device=False"]))
def test_one_line_form_is_rewritten(model, optimizer, strategy, kwargs):
    if model == optimizer:
        return
    source = (
        "from lightning.fabric import Fabric\n"
        f'fabric = Fabric(strategy="{strategy}")\n'
        f"{model}, {optimizer} = fabric.setup_module({model}{kwargs}), fabric.setup_optimizers({optimizer})\n"
    )
    findings = ANALYZER.analyze(source)
    assert [f.code for f in findings] == ["FAB001"]
    assert findings[0].fix is not None and findings[0].fix.applicability.value == "safe"
    fixed = apply_edits(source, findings[0].fix.edits)
    assert fixed.splitlines()[-1] == f"{model}, {optimizer} = fabric.setup({model}, {optimizer}{kwargs})"
    assert ANALYZER.analyze(fixed) == []
