"""Rewrite separated setup into one joint ``fabric.setup(model, optimizer)`` — only where that
provably keeps behaviour.

Shape handled::

    T_m = R.setup_module(M, **kw)      # or R.setup(M, **kw)                 (statement A)
    S_1 … S_k                          # statements between, moved above the joint call
    T_o = R.setup_optimizers(O, …)                                            (statement B)
  →
    S_1 … S_k
    T_m, T_o = R.setup(M, O, …, **kw)

The def-use check: the ``S_i`` and ``O`` may use the set-up model only through
``.parameters()`` / ``.named_parameters()`` (the wrapper forwards them to the raw module, so they
are the same tensors before and after setup; a renamed target is rewritten to the raw model),
must not rebind ``R``, ``M``, ``T_m`` or any name in ``M``/``kw``, must not call Fabric methods
that need the model set up, and must not leave the block early. Otherwise no edit is made and the
reason is returned.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional

from fabric_lsp.engine.model import Applicability, Edit, Fix, Pos, Span
from fabric_lsp.engine.modules import FUNC_TYPES, ModuleInfo
from fabric_lsp.engine.text import apply_edits

MODULE_SETUP_METHODS = ("setup_module", "setup")
#: Module methods that return the same parameters before and after Fabric wraps the module.
PARAMETER_METHODS = frozenset({"parameters", "named_parameters"})
#: Fabric methods that must not move before the module setup.
ORDER_SENSITIVE_FABRIC_METHODS = frozenset(
    {
        "load",
        "load_raw",
        "save",
        "backward",
        "clip_gradients",
        "no_backward_sync",
        "setup",
        "setup_module",
        "setup_optimizers",
        "init_module",
        "sharded_model",
        "autocast",
        "call",
        "to_device",
    }
)
MODULE_SETUP_KEYWORDS = frozenset({"move_to_device", "_reapply_compile"})


@dataclass
class Plan:
    """The outcome of planning a joint-setup rewrite."""

    fix: Optional[Fix] = None
    reason: str = ""  # why there is no (safe) fix, for the diagnostic message
    module_setup: Optional[ast.Call] = None  # the separated module-setup call, when found
    notes: list[str] = field(default_factory=list)


def _same(a: ast.AST, b: ast.AST) -> bool:
    return ast.dump(a) == ast.dump(b)


def is_module_setup_call(node: ast.AST, receiver: ast.AST) -> bool:
    """``R.setup_module(m, ...)`` or ``R.setup(m, ...)`` with exactly one positional argument."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in MODULE_SETUP_METHODS
        and _same(node.func.value, receiver)
        and len(node.args) == 1
        and not isinstance(node.args[0], ast.Starred)
    )


def _call_of_stmt(stmt: ast.stmt) -> Optional[ast.Call]:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Call):
        return stmt.value
    if isinstance(stmt, ast.AnnAssign) and stmt.simple and isinstance(stmt.value, ast.Call):
        return stmt.value
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        return stmt.value
    return None


def _target_of(stmt: ast.stmt) -> Optional[ast.AST]:
    if isinstance(stmt, ast.Assign):
        return stmt.targets[0]
    if isinstance(stmt, ast.AnnAssign):
        return stmt.target
    return None


def _trained_models(module: ModuleInfo, call: ast.Call, block: list, idx: int) -> set[str]:
    """Dumps of the models whose ``.parameters()`` build the optimizers passed to ``call``: in
    the argument itself, or in the statement of the same block that last assigned it."""
    found: set[str] = set()

    def collect(expr: ast.AST) -> None:
        for n in ast.walk(expr):
            if (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and n.func.attr in PARAMETER_METHODS
                and _is_ref_chain(n.func.value)
            ):
                found.add(ast.dump(_load(n.func.value)))

    for arg in call.args:
        collect(arg)
        if isinstance(arg, (ast.Name, ast.Attribute)):
            key = ast.dump(_load(arg))
            for prev in reversed(block[:idx]):
                target = _target_of(prev)
                if target is not None and ast.dump(_load(target)) == key and getattr(prev, "value", None) is not None:
                    collect(prev.value)
                    break
    return found


def find_module_setup(module: ModuleInfo, call: ast.Call) -> tuple[Optional[ast.stmt], Optional[ast.Call], bool]:
    """The module-setup statement that goes with ``call`` (``R.setup_optimizers(...)``):
    (statement, call, in the same block as ``call``'s statement).

    With several module setups in reach (a GAN's generator and discriminator), the one whose
    model the optimizer is built from is chosen; when that cannot be told, none is."""
    receiver = call.func.value
    stmt = module.stmt_of(call)
    if stmt is None:
        return None, None, False
    _, block, idx = module.block_of(stmt)
    candidates: list[tuple[ast.stmt, ast.Call]] = []
    for prev in reversed(block[:idx]):
        c = _call_of_stmt(prev)
        if c is not None and is_module_setup_call(c, receiver):
            candidates.append((prev, c))
        if _rebinds(prev, receiver):
            break
    if len(candidates) == 1:
        return candidates[0][0], candidates[0][1], True
    if candidates:
        trained = _trained_models(module, call, block, idx)
        matching = [
            (st, c)
            for st, c in candidates
            if ast.dump(_load(c.args[0])) in trained
            or (_target_of(st) is not None and ast.dump(_load(_target_of(st))) in trained)
        ]
        if len(matching) == 1:
            return matching[0][0], matching[0][1], True
        return candidates[0][0], candidates[0][1], False  # related information only: no edit
    # elsewhere in the same scope, before the call
    scope = module.scope_of(call)
    best = None
    for other in module.calls_by_name.get("setup_module", []) + module.calls_by_name.get("setup", []):
        if other is call or not is_module_setup_call(other, receiver) or module.scope_of(other) is not scope:
            continue
        if (other.lineno, other.col_offset) < (call.lineno, call.col_offset):
            if best is None or (other.lineno, other.col_offset) > (best.lineno, best.col_offset):
                best = other
    if best is not None:
        return module.stmt_of(best), best, False
    return None, None, False


def _stores(node: ast.AST) -> list[ast.AST]:
    out = []
    for n in ast.walk(node):
        if isinstance(n, (ast.Name, ast.Attribute, ast.Subscript)) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.append(n)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for alias in n.names:
                out.append(ast.Name(id=(alias.asname or alias.name).split(".")[0], ctx=ast.Store()))
        elif isinstance(n, (*FUNC_TYPES, ast.ClassDef)):
            out.append(ast.Name(id=n.name, ctx=ast.Store()))
    return out


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _rebinds(stmt: ast.AST, expr: ast.AST) -> bool:
    """Whether ``stmt`` may rebind ``expr`` (a name or attribute chain) or any name in it."""
    names = _names(expr)
    for s in _stores(stmt):
        if isinstance(s, ast.Name) and s.id in names:
            return True
        if isinstance(s, (ast.Attribute, ast.Subscript)) and _prefix_of(s, expr):
            return True
    for n in ast.walk(stmt):
        if isinstance(n, (ast.Global, ast.Nonlocal)) and names & set(n.names):
            return True
    return False


def _prefix_of(store: ast.AST, expr: ast.AST) -> bool:
    """``self.model`` stored, ``self.model`` / ``self.model.x`` read: the store changes ``expr``."""
    target = ast.dump(_load(store))
    cur: ast.AST = expr
    while True:
        if ast.dump(_load(cur)) == target:
            return True
        if isinstance(cur, (ast.Attribute, ast.Subscript)):
            cur = cur.value
        else:
            return False


def _load(node: ast.AST) -> ast.AST:
    if isinstance(node, ast.Attribute):
        return ast.Attribute(value=_load(node.value), attr=node.attr, ctx=ast.Load())
    if isinstance(node, ast.Name):
        return ast.Name(id=node.id, ctx=ast.Load())
    if isinstance(node, ast.Subscript):
        return ast.Subscript(value=_load(node.value), slice=node.slice, ctx=ast.Load())
    return node


def _is_ref_chain(node: ast.AST) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _uses(root: ast.AST, target: ast.AST, parents: dict) -> tuple[list[ast.AST], list[ast.AST]]:
    """Loads of ``target`` under ``root``: (uses via .parameters()-like calls, other uses)."""
    key = ast.dump(_load(target))
    ok, bad = [], []
    for n in ast.walk(root):
        if isinstance(n, (ast.Name, ast.Attribute)) and isinstance(n.ctx, ast.Load) and ast.dump(_load(n)) == key:
            parent = parents.get(n)
            grand = parents.get(parent) if parent is not None else None
            if (
                isinstance(parent, ast.Attribute)
                and parent.attr in PARAMETER_METHODS
                and isinstance(grand, ast.Call)
                and grand.func is parent
            ):
                ok.append(n)
            else:
                bad.append(n)
    return ok, bad


def _leaves_block(stmt: ast.AST) -> Optional[ast.AST]:
    stack = [stmt]
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Return, ast.Raise, ast.Break, ast.Continue, ast.Yield, ast.YieldFrom, ast.Await)):
            return n
        if isinstance(n, (*FUNC_TYPES, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(n))
    return None


def _fabric_calls(stmt: ast.AST, receiver: ast.AST, involved: list[ast.AST]) -> Optional[ast.Call]:
    """A call on the Fabric between the two calls that must not move before the module setup.
    Setting up *other* models and optimizers (a GAN's second pair) is independent of this one."""
    keys = {ast.dump(_load(e)) for e in involved}
    for n in ast.walk(stmt):
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr in ORDER_SENSITIVE_FABRIC_METHODS
            and _same(n.func.value, receiver)
        ):
            if n.func.attr in ("setup", "setup_module", "setup_optimizers") and not any(
                ast.dump(_load(x)) in keys for a in n.args for x in ast.walk(a) if isinstance(x, (ast.Name, ast.Attribute))
            ):
                continue
            return n
    return None


def _whole_lines(module: ModuleInfo, stmt: ast.stmt) -> bool:
    """The statement starts its first line (after indentation) and only a comment follows it."""
    lines = module.lines
    start, end = lines.node_start(stmt), lines.node_end(stmt)
    before = lines.content(start.line)[: start.col]
    after = lines.content(end.line)[end.col :].strip()
    return before.strip() == "" and (after == "" or after.startswith("#"))


def _edited_lines(module: ModuleInfo, first: int, last: int, edits: list[Edit]) -> str:
    """Lines ``first``..``last`` of the module with ``edits`` (which lie inside them) applied."""
    lines = module.lines
    lo, hi = lines.starts[first], lines.offset(Pos(last, len(lines.line(last))))
    shifted = [
        Edit(Span(Pos(e.span.start.line - first, e.span.start.col), Pos(e.span.end.line - first, e.span.end.col)), e.new_text)
        for e in edits
    ]
    return apply_edits(module.text[lo:hi], shifted)


def _top_level_parses(module: ModuleInfo, edits: list[Edit]) -> None:
    """Apply ``edits`` to the top-level statements they lie in and parse them (raises)."""
    lines = module.lines
    lo_line = min(e.span.start.line for e in edits)
    hi_line = max(e.span.end.line - (1 if e.span.end.col == 0 and e.span.end.line > e.span.start.line else 0) for e in edits)
    top_lo, top_hi = module.top_for_line(lo_line + 1), module.top_for_line(hi_line + 1)
    if top_lo is None or top_hi is None:
        raise ValueError("the calls are not inside top-level statements")
    first = min([top_lo.lineno] + [d.lineno for d in getattr(top_lo, "decorator_list", [])]) - 1
    last = top_hi.end_lineno - 1
    lo, hi = lines.starts[first], lines.offset(Pos(last, len(lines.line(last))))
    if any(not (lo <= lines.offset(e.span.start) and lines.offset(e.span.end) <= hi) for e in edits):
        raise ValueError("an edit reaches outside the statement")
    snippet = _edited_lines(module, first, last, edits)
    compile(snippet, module.path or "<fix>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)


def _region_parses(module: ModuleInfo, a_stmt: ast.stmt, b_stmt: ast.stmt, edits: list[Edit]) -> bool:
    """Apply ``edits`` to the lines from statement A to statement B, remove the block's
    indentation, and parse. False when that cannot be done exactly (a line inside the region
    that is not indented like the block, e.g. in a multi-line string)."""
    lines = module.lines
    first, last = a_stmt.lineno - 1, b_stmt.end_lineno - 1
    if any(e.span.start.line < first or e.span.end.line > last + 1 or (e.span.end.line == last + 1 and e.span.end.col) for e in edits):
        return False
    indent = lines.indentation(first)
    region = _edited_lines(module, first, last, edits)
    out = []
    for line in region.splitlines(keepends=True):
        if line.strip() and not line.startswith(indent):
            return False
        out.append(line[len(indent) :] if line.strip() else line.lstrip(" \t"))
    compile("".join(out), module.path or "<fix>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    return True


def plan_joint_setup(
    module: ModuleInfo,
    call: ast.Call,
    *,
    deepspeed_possible: bool,
    safe_strategies: bool,
) -> Plan:
    """Plan the fix for the separated ``call`` (``R.setup_optimizers(...)``).

    ``deepspeed_possible``: DeepSpeed is among the strategies (it takes one optimizer only).
    ``safe_strategies``: every strategy the code may choose is known to accept joint setup.
    """
    lines = module.lines
    receiver = call.func.value
    a_stmt, a_call, same_block = find_module_setup(module, call)
    plan = Plan(module_setup=a_call)
    if a_call is None:
        plan.reason = "no module setup found before it; pass the model and optimizer(s) to `setup(...)` together"
        return plan
    if not same_block:
        plan.reason = "the module is set up in a different block; merge the two calls into one `setup(...)` by hand"
        return plan
    b_stmt = module.stmt_of(call)
    if _call_of_stmt(b_stmt) is not call:
        plan.reason = "the `setup_optimizers` call is part of a larger expression; rewrite it by hand"
        return plan
    if not module.parsed.clean:
        plan.reason = "the file has syntax errors"
        return plan
    if call.keywords or any(isinstance(a, ast.Starred) for a in call.args) or not call.args:
        plan.reason = "the optimizers are passed in a form that cannot be rewritten automatically"
        return plan
    n_opt = len(call.args)
    if n_opt > 1 and deepspeed_possible:
        plan.reason = (
            f"DeepSpeed accepts exactly one optimizer in `setup(...)` and {n_opt} are passed; "
            "combine them (e.g. parameter groups) or choose another strategy"
        )
        return plan
    if any(kw.arg is None for kw in a_call.keywords) or any(
        kw.arg not in MODULE_SETUP_KEYWORDS for kw in a_call.keywords
    ):
        plan.reason = "the module setup has keyword arguments `setup(...)` does not take"
        return plan
    t_m = _target_of(a_stmt)
    t_o = _target_of(b_stmt)
    if t_m is None:
        plan.reason = "the result of the module setup is discarded; keep the wrapped model"
        return plan
    if not _is_ref_chain(t_m) or (t_o is not None and not isinstance(t_o, (ast.Name, ast.Attribute, ast.Tuple, ast.List))):
        plan.reason = "the set-up objects are assigned to targets that cannot be combined"
        return plan
    if isinstance(t_o, (ast.Tuple, ast.List)):
        if len(t_o.elts) != n_opt or not all(_is_ref_chain(e) for e in t_o.elts):
            plan.reason = "the optimizer targets do not match the optimizers passed"
            return plan
    elif t_o is not None and n_opt > 1:
        plan.reason = "several optimizers are assigned to one name; unpack them explicitly"
        return plan
    if not (_whole_lines(module, a_stmt) and _whole_lines(module, b_stmt)):
        plan.reason = "the calls share their lines with other statements"
        return plan

    _, block, ia = module.block_of(a_stmt)
    ib = block.index(b_stmt)
    between = block[ia + 1 : ib]
    m_expr = a_call.args[0]
    parents = module.parents
    renamed = not _same(_load(t_m), _load(m_expr))

    # def-use checks over the statements between and the optimizer arguments
    for s in between:
        early = _leaves_block(s)
        if early is not None:
            plan.reason = f"line {early.lineno} may leave the block between the two calls"
            return plan
        for expr, what in ((receiver, "the Fabric object"), (m_expr, "the model passed to the module setup"), (t_m, "the set-up model")):
            if _rebinds(s, expr):
                plan.reason = f"{what} is reassigned between the two calls (line {s.lineno})"
                return plan
        for kw in a_call.keywords:
            if _rebinds(s, kw.value):
                plan.reason = f"`{kw.arg}` depends on a name reassigned between the calls (line {s.lineno})"
                return plan
        sensitive = _fabric_calls(s, receiver, [m_expr, t_m, *call.args])
        if sensitive is not None:
            plan.reason = f"`{module.segment(sensitive.func)}` between the two calls (line {sensitive.lineno}) needs the model set up first"
            return plan
    rename_nodes: list[ast.AST] = []
    for root in [*between, *call.args]:
        ok, bad = _uses(root, t_m, parents)
        if bad:
            plan.reason = (
                f"the set-up model `{module.segment(t_m)}` is used between the two calls (line {bad[0].lineno}); "
                "move that use after a joint `setup(...)` by hand"
            )
            return plan
        if renamed:
            rename_nodes += ok
    if renamed and rename_nodes and not _is_ref_chain(m_expr):
        plan.reason = f"the optimizer is built from the set-up model `{module.segment(t_m)}` and the raw model is not a plain name"
        return plan
    if renamed and not _is_ref_chain(m_expr) and between:
        plan.reason = "the model expression would be evaluated after the statements between the calls"
        return plan

    # -- edits ---------------------------------------------------------------------------------
    m_src = module.segment(m_expr)
    edits: list[Edit] = []
    a_start, a_end = lines.node_start(a_stmt), lines.node_end(a_stmt)
    trailing = lines.content(a_end.line)[a_end.col :].strip()
    if trailing:  # keep the comment that followed the removed statement
        indent = lines.indentation(a_start.line)
        edits.append(Edit(Span(Pos(a_start.line, 0), Pos(a_end.line, len(lines.content(a_end.line)))), indent + trailing))
    else:
        end = Pos(a_end.line + 1, 0) if a_end.line + 1 < len(lines) else Pos(a_end.line, len(lines.line(a_end.line)))
        start = Pos(a_start.line, 0)
        if a_end.line + 1 >= len(lines) and a_start.line > 0:
            # last line of the file: remove the preceding line break instead
            prev = lines.line(a_start.line - 1)
            start = Pos(a_start.line - 1, len(prev.rstrip("\r\n")))
            end = Pos(a_end.line, len(lines.content(a_end.line)))
        edits.append(Edit(Span(start, end), ""))
    in_call: list[ast.AST] = []
    for n in rename_nodes:
        if any(n in set(ast.walk(arg)) for arg in call.args):
            in_call.append(n)
        else:
            edits.append(Edit(Span(lines.node_start(n), lines.node_end(n)), m_src))

    def seg_with_renames(arg: ast.AST) -> str:
        text = module.segment(arg)
        base = lines.offset(lines.node_start(arg))
        for n in sorted((n for n in in_call if n in set(ast.walk(arg))), key=lambda n: (n.lineno, n.col_offset), reverse=True):
            s = lines.offset(lines.node_start(n)) - base
            e = lines.offset(lines.node_end(n)) - base
            text = text[:s] + m_src + text[e:]
        return text

    targets = [module.segment(t_m)]
    if t_o is None:
        # the script goes on using the optimizer by its own name: bind the wrapped one to it
        targets += [module.segment(a) if _is_ref_chain(a) else "_" for a in call.args]
    elif isinstance(t_o, (ast.Tuple, ast.List)):
        targets += [module.segment(e) for e in t_o.elts]
    else:
        targets.append(module.segment(t_o))
    args = [m_src] + [seg_with_renames(a) for a in call.args] + [module.segment(kw) for kw in a_call.keywords]
    new_stmt = f"{', '.join(targets)} = {module.segment(receiver)}.setup({', '.join(args)})"
    edits.append(Edit(Span(lines.node_start(b_stmt), lines.node_end(b_stmt)), new_stmt))

    # the result must parse, and nothing may overlap: every edit lies between the two calls'
    # statements, siblings of one block, so parsing that region (dedented by the block's
    # indentation) proves it; when it cannot be dedented, the enclosing top-level statements
    try:
        if not _region_parses(module, a_stmt, b_stmt, edits):
            _top_level_parses(module, edits)
    except (SyntaxError, ValueError) as exc:
        plan.reason = f"the rewrite would not parse ({exc})"
        return plan

    unsafe_why = []
    if t_o is None:
        unsafe_why.append("the optimizer returned by `setup_optimizers` was discarded; the fix rebinds it")
    if not safe_strategies:
        unsafe_why.append("not every strategy this code may choose is known to accept joint setup")
    applicability = Applicability.UNSAFE if unsafe_why else Applicability.SAFE
    receiver_src = module.segment(receiver)
    title = f"Set up model and optimizer jointly with `{receiver_src}.setup(...)`"
    if applicability is Applicability.UNSAFE:
        title += " (unsafe)"
        plan.notes += unsafe_why
    plan.fix = Fix(title, applicability, tuple(edits))
    return plan
