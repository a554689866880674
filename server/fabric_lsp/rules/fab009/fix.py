"""Rewrite joint ``fabric.setup(model, optimizer)`` into separate setup — only where that provably
keeps everything but the order of setup and optimizer construction.

Shape handled (one block, ``M`` and ``O`` plain names)::

    O = Ctor(... M.parameters() ...)          # the optimizer's construction (statement C)
    S_1 … S_k                                 # neither use M nor O, nor rebind what Ctor reads
    T_m, T_o = R.setup(M, O, **kw)            # kw: move_to_device / _reapply_compile (statement B)
  →
    S_1 … S_k
    T_m = R.setup_module(M, **kw)
    O = Ctor(... T_m.parameters() ...)
    T_o = R.setup_optimizers(O)

The optimizer is then built from the set-up module's parameters (the wrapper forwards
``parameters()`` to the sharded module), as Lightning asks for the strategies that need separate
setup. Everything else about the statements keeps its place.
"""

from __future__ import annotations

import ast

from fabric_lsp import facts
from fabric_lsp.engine.findings import Applicability, Edit, Fix, Pos, Span
from fabric_lsp.engine.program.meta import optimizer_construction
from fabric_lsp.engine.python.defuse import is_ref_chain, leaves_block, names, parameter_uses, rebinds
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.python.text import apply_edits
from fabric_lsp.engine.python.values import StrategyChoice

MODULE_SETUP_KEYWORDS = frozenset({"move_to_device", "_reapply_compile"})


class NoFix(Exception):
    """Why no rewrite is offered (the diagnostic's message says it)."""


def plan_separate_setup(module: ModuleInfo, call: ast.Call, choices: list[StrategyChoice]) -> tuple[Fix | None, str]:
    """The unsafe fix for the joint ``call``, or (None, why there is none)."""
    try:
        _check_strategies(choices)
        edits = _edits(module, call)
    except NoFix as why:
        return None, str(why)
    receiver = module.segment(call.func.value)  # type: ignore[attr-defined]
    title = f"Set up the model first with `{receiver}.setup_module(...)`, then build and set up the optimizer (unsafe)"
    return Fix(title, Applicability.UNSAFE, tuple(edits)), ""


def _check_strategies(choices: list[StrategyChoice]) -> None:
    joint = [c for c in choices if c.kind is not None and c.kind.raises_on_separated_setup]
    if joint:
        names_ = ", ".join(dict.fromkeys(f"`{c.class_name}` ({c.label})" for c in joint))
        raise NoFix(
            f"another possible strategy requires joint setup ({names_}); set up separately only under "
            "`isinstance(fabric.strategy, ...)` for the strategy that needs it"
        )
    if any(c.kind is None or c.kind in facts.JOINT_SETUP_UNDECIDED for c in choices):
        raise NoFix("a possible strategy cannot be determined statically and may require joint setup (DeepSpeed, XLA)")


def _setup_statement(module: ModuleInfo, call: ast.Call) -> tuple[ast.Assign, ast.expr, ast.expr]:
    stmt = module.stmt_of(call)
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.value is call):
        raise NoFix("the `setup` call is not a plain assignment `model, optimizer = fabric.setup(model, optimizer)`")
    if len(call.args) != 2 or any(isinstance(a, ast.Starred) for a in call.args):
        raise NoFix("several optimizers are passed; split the setup by hand")
    if any(kw.arg not in MODULE_SETUP_KEYWORDS for kw in call.keywords):
        raise NoFix(
            "`setup` gets a keyword argument `setup_module` does not take (a scheduler is built from the optimizer)"
        )
    target = stmt.targets[0]
    if not (
        isinstance(target, (ast.Tuple, ast.List))
        and len(target.elts) == 2
        and all(is_ref_chain(e) for e in target.elts)
    ):
        raise NoFix("the set-up objects are not assigned to two names")
    return stmt, target.elts[0], target.elts[1]


def _construction(module: ModuleInfo, call: ast.Call, b_stmt: ast.stmt) -> tuple[ast.Assign, list, int, int]:
    m, o = call.args
    if not (isinstance(m, ast.Name) and isinstance(o, ast.Name)):
        raise NoFix("the model and optimizer are not passed by name")
    c_stmt, value = optimizer_construction(module, o, call)
    if not (isinstance(c_stmt, ast.Assign) and len(c_stmt.targets) == 1 and isinstance(c_stmt.targets[0], ast.Name)):
        raise NoFix(f"the optimizer `{o.id}` is not built by an assignment in this function")
    _, block, ib = module.block_of(b_stmt)
    ic = next((i for i, s in enumerate(block) if s is c_stmt), -1)
    if ic < 0 or ic > ib:
        raise NoFix(
            f"the optimizer `{o.id}` is built in another block; move its construction below `setup_module` by hand"
        )
    ok, bad = parameter_uses(value, m, module.parent_of)
    if not ok or bad:
        raise NoFix(
            f"the optimizer is not built from `{m.id}.parameters()` alone (parameter groups, submodules or another model)"
        )
    return c_stmt, block, ic, ib


def _check_between(
    module: ModuleInfo, call: ast.Call, between: list[ast.stmt], value: ast.expr, targets: list[ast.expr]
) -> None:
    m, o = call.args
    assert isinstance(m, ast.Name) and isinstance(o, ast.Name)
    read = names(value)
    if o.id in read or (read & set().union(*(names(t) for t in targets))) - {m.id}:
        raise NoFix("the optimizer's construction reads a name the setup assigns")
    for stmt in between:
        if leaves_block(stmt) is not None:
            raise NoFix("a statement between the optimizer and the setup may leave the block")
        used = names(stmt)
        if m.id in used or o.id in used:
            raise NoFix(f"`{m.id}` or `{o.id}` is used between the optimizer's construction and the setup")
        if rebinds(stmt, value):
            raise NoFix("a name the optimizer's construction reads is reassigned before the setup")


def _whole_lines(module: ModuleInfo, stmt: ast.stmt) -> bool:
    lines = module.lines
    start, end = lines.node_start(stmt), lines.node_end(stmt)
    return lines.content(start.line)[: start.col].strip() == "" and lines.content(end.line)[end.col :].strip() == ""


def _edits(module: ModuleInfo, call: ast.Call) -> list[Edit]:
    b_stmt, t_m, t_o = _setup_statement(module, call)
    c_stmt, block, ic, ib = _construction(module, call, b_stmt)
    value = c_stmt.value
    _check_between(module, call, block[ic + 1 : ib], value, [t_m, t_o])
    if not (_whole_lines(module, c_stmt) and _whole_lines(module, b_stmt)):
        raise NoFix("the statements share their lines with other code")
    lines = module.lines
    indent = lines.content(lines.node_start(b_stmt).line)[: lines.node_start(b_stmt).col]
    receiver = module.segment(call.func.value)  # type: ignore[attr-defined]
    m_src, o_src, tm_src = module.segment(call.args[0]), module.segment(call.args[1]), module.segment(t_m)
    kws = "".join(f", {module.segment(kw)}" for kw in call.keywords)
    new = (
        f"{tm_src} = {receiver}.setup_module({m_src}{kws})\n"
        f"{indent}{o_src} = {_value_text(module, value, call.args[0], tm_src)}\n"
        f"{indent}{module.segment(t_o)} = {receiver}.setup_optimizers({o_src})"
    )
    c_start, c_end = lines.node_start(c_stmt), lines.node_end(c_stmt)
    edits = [
        Edit(Span(Pos(c_start.line, 0), Pos(c_end.line + 1, 0)), ""),
        Edit(Span(lines.node_start(b_stmt), lines.node_end(b_stmt)), new),
    ]
    try:
        ast.parse(apply_edits(module.text, edits))
    except SyntaxError as exc:
        raise NoFix(f"the rewrite would not parse ({exc.msg})") from None
    return edits


def _value_text(module: ModuleInfo, value: ast.expr, m: ast.expr, tm_src: str) -> str:
    """The construction's source with the raw model in ``m.parameters()`` replaced by the set-up one."""
    lines = module.lines
    text = module.segment(value)
    base = lines.offset(lines.node_start(value))
    uses, _ = parameter_uses(value, m, module.parent_of)
    for n in sorted(uses, key=lambda n: (n.lineno, n.col_offset), reverse=True):
        s, e = lines.offset(lines.node_start(n)) - base, lines.offset(lines.node_end(n)) - base
        text = text[:s] + tm_src + text[e:]
    return text
