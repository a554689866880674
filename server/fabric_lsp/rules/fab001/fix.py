"""Rewrite separated setup into one joint ``fabric.setup(model, optimizer)`` — only where that
provably keeps behaviour.

Shapes handled::

    T_m = R.setup_module(M, **kw)      # or R.setup(M, **kw)                 (statement A)
    S_1 … S_k                          # statements between, moved above the joint call
    T_o = R.setup_optimizers(O, …)                                            (statement B)
  →
    S_1 … S_k
    T_m, T_o = R.setup(M, O, …, **kw)

    T_m, T_o = R.setup_module(M, **kw), R.setup_optimizers(O)   # O plain names (one line)
  →
    T_m, T_o = R.setup(M, O, **kw)

The def-use check: the ``S_i`` and ``O`` may use the set-up model only through
``.parameters()`` / ``.named_parameters()`` (the wrapper forwards them to the raw module, so they
are the same tensors before and after setup; a renamed target is rewritten to the raw model),
must not rebind ``R``, ``M``, ``T_m`` or any name in ``M``/``kw``, must not call Fabric methods
that need the model set up, and must not leave the block early. Otherwise no edit is made and the
reason is returned.

Which strategies accept joint setup is the rule's question (``Branches``, from ``facts``); the
planner only adds the one that depends on the code: after the rewrite every optimizer is built
before the joint setup, which under FSDP raises when the model may hold meta-device parameters
there (``fabric.init_module(empty_init=True)``; Lightning 2.6.6 ``fabric/fabric.py:1208``) —
whether the optimizer was built between the calls (FSDP had materialised the model by then) or
before the module setup (the separate setup already fails there, ``fabric.py:1237``).
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field

from fabric_lsp.engine.findings import Applicability, Edit, Fix, Pos, Related, Span
from fabric_lsp.engine.program.meta import OtherModules, meta_device_evidence, meta_parameters, optimizer_construction
from fabric_lsp.engine.python.astwalk import walk
from fabric_lsp.engine.python.defuse import PARAMETER_METHODS
from fabric_lsp.engine.python.defuse import is_ref_chain as _is_ref_chain
from fabric_lsp.engine.python.defuse import key as _key
from fabric_lsp.engine.python.defuse import leaves_block as _leaves_block
from fabric_lsp.engine.python.defuse import load as _load
from fabric_lsp.engine.python.defuse import parameter_uses as _uses
from fabric_lsp.engine.python.defuse import rebinds as _rebinds
from fabric_lsp.engine.python.defuse import same as _same
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.python.text import apply_edits

MODULE_SETUP_METHODS = ("setup_module", "setup")
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

    fix: Fix | None = None
    reason: str = ""  # why there is no (safe) fix, for the diagnostic message
    module_setup: ast.Call | None = None  # the separated module-setup call, when found
    notes: list[str] = field(default_factory=list)  # why an offered fix is unsafe
    related: tuple[Related, ...] = ()  # places that explain the reason (e.g. a meta-device model)


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


def _call_of_stmt(stmt: ast.stmt) -> ast.Call | None:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Call):
        return stmt.value
    if isinstance(stmt, ast.AnnAssign) and stmt.simple and isinstance(stmt.value, ast.Call):
        return stmt.value
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        return stmt.value
    return None


def _target_of(stmt: ast.stmt) -> ast.AST | None:
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
        for n in walk(expr):
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


def find_module_setup(module: ModuleInfo, call: ast.Call) -> tuple[ast.stmt | None, ast.Call | None, bool]:
    """The module-setup statement that goes with ``call`` (``R.setup_optimizers(...)``):
    (statement, call, in the same block as ``call``'s statement).

    With several module setups in reach (a GAN's generator and discriminator), the one whose
    model the optimizer is built from is chosen; when that cannot be told, none is."""
    stmt = module.stmt_of(call)
    if stmt is None:
        return None, None, False
    pair = _one_line_pair(stmt, call)
    if pair is not None:
        return stmt, pair, True
    found = _module_setup_in_block(module, call, stmt)
    if found is not None:
        return found
    best = _module_setup_in_scope(module, call)
    if best is not None:
        return module.stmt_of(best), best, False
    return None, None, False


def _module_setup_in_block(module: ModuleInfo, call: ast.Call, stmt: ast.stmt):
    """The module setup among the statements before ``stmt`` in its block, up to a rebinding of
    the receiver: (statement, call, True) — or (…, False) when several are in reach and the
    optimizer's model cannot tell which; None when there is none."""
    receiver = call.func.value  # type: ignore[attr-defined]
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
    if not candidates:
        return None
    trained = _trained_models(module, call, block, idx)
    matching = [(st, c) for st, c in candidates if _sets_up_one_of(st, c, trained)]
    if len(matching) == 1:
        return matching[0][0], matching[0][1], True
    return candidates[0][0], candidates[0][1], False  # related information only: no edit


def _sets_up_one_of(stmt: ast.stmt, setup: ast.Call, models: set[str]) -> bool:
    target = _target_of(stmt)
    return ast.dump(_load(setup.args[0])) in models or (target is not None and ast.dump(_load(target)) in models)


def _module_setup_in_scope(module: ModuleInfo, call: ast.Call) -> ast.Call | None:
    """The last module setup on the same receiver before ``call`` elsewhere in its scope."""
    receiver = call.func.value  # type: ignore[attr-defined]
    scope = module.scope_of(call)
    here = (call.lineno, call.col_offset)
    earlier = [
        other
        for other in module.calls_by_name.get("setup_module", []) + module.calls_by_name.get("setup", [])
        if other is not call
        and (other.lineno, other.col_offset) < here
        and is_module_setup_call(other, receiver)
        and module.scope_of(other) is scope
    ]
    return max(earlier, key=lambda c: (c.lineno, c.col_offset), default=None)


def _one_line_pair(stmt: ast.stmt, call: ast.Call) -> ast.Call | None:
    """The module setup of ``T_m, T_o = R.setup_module(M), R.setup_optimizers(O)`` (``call``)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Tuple)):
        return None
    target, values = stmt.targets[0], stmt.value.elts
    if not (
        isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == 2 and len(values) == 2 and values[1] is call
    ):
        return None
    first = values[0]
    receiver = call.func.value  # type: ignore[attr-defined]
    return first if isinstance(first, ast.Call) and is_module_setup_call(first, receiver) else None


def _fabric_calls(stmt: ast.AST, receiver: ast.AST, involved: list[ast.AST]) -> ast.Call | None:
    """A call on the Fabric between the two calls that must not move before the module setup.
    Setting up *other* models and optimizers (a GAN's second pair) is independent of this one."""
    keys = {ast.dump(_load(e)) for e in involved}
    for n in walk(stmt):
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr in ORDER_SENSITIVE_FABRIC_METHODS
            and _same(n.func.value, receiver)
        ):
            if n.func.attr in ("setup", "setup_module", "setup_optimizers") and not any(
                ast.dump(_load(x)) in keys for a in n.args for x in walk(a) if isinstance(x, (ast.Name, ast.Attribute))
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
        Edit(
            Span(Pos(e.span.start.line - first, e.span.start.col), Pos(e.span.end.line - first, e.span.end.col)),
            e.new_text,
        )
        for e in edits
    ]
    return apply_edits(module.text[lo:hi], shifted)


def _top_level_parses(module: ModuleInfo, edits: list[Edit]) -> None:
    """Apply ``edits`` to the top-level statements they lie in and parse them (raises)."""
    lines = module.lines
    lo_line = min(e.span.start.line for e in edits)
    hi_line = max(
        e.span.end.line - (1 if e.span.end.col == 0 and e.span.end.line > e.span.start.line else 0) for e in edits
    )
    top_lo, top_hi = module.top_for_line(lo_line + 1), module.top_for_line(hi_line + 1)
    if top_lo is None or top_hi is None:
        raise ValueError("the calls are not inside top-level statements")
    first = min([top_lo.lineno] + [d.lineno for d in getattr(top_lo, "decorator_list", [])]) - 1
    last = (top_hi.end_lineno or top_hi.lineno) - 1
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
    first, last = a_stmt.lineno - 1, (b_stmt.end_lineno or b_stmt.lineno) - 1
    if any(
        e.span.start.line < first or e.span.end.line > last + 1 or (e.span.end.line == last + 1 and e.span.end.col)
        for e in edits
    ):
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


# -- planning --------------------------------------------------------------------------------


class NoFix(Exception):
    """Why no rewrite is planned; the diagnostic's message says it, and ``related`` shows where."""

    def __init__(self, reason: str, *related: Related) -> None:
        super().__init__(reason)
        self.related = related


@dataclass(frozen=True)
class Branches:
    """What the strategies this Fabric can have mean for the rewrite (decided by the rule from
    ``facts``)."""

    #: DeepSpeed is possible: joint setup takes exactly one optimizer
    deepspeed_possible: bool = False
    #: every possible strategy is known to accept joint setup
    all_accept: bool = True
    #: possible strategies (labels) whose joint setup raises on an optimizer over meta-device
    #: parameters, unknown strategies included
    meta_sensitive: tuple[str, ...] = ()


@dataclass
class _Site:
    """The two calls and what the rewrite needs to know about them."""

    module: ModuleInfo
    call: ast.Call  # R.setup_optimizers(...)
    a_stmt: ast.stmt  # the module setup's statement (the same as b_stmt in the one-line form)
    a_call: ast.Call  # R.setup_module(M, **kw) or R.setup(M, **kw)
    b_stmt: ast.stmt
    t_m: ast.AST  # the set-up model's target
    t_o: ast.AST | None  # the optimizers' target (None: discarded)
    one_line: bool

    @property
    def receiver(self) -> ast.AST:
        return self.call.func.value  # type: ignore[attr-defined]

    @property
    def m_expr(self) -> ast.AST:
        return self.a_call.args[0]

    @property
    def renamed(self) -> bool:
        return not _same(_load(self.t_m), _load(self.m_expr))

    @property
    def between(self) -> list[ast.stmt]:
        if self.one_line:
            return []
        _, block, ia = self.module.block_of(self.a_stmt)
        return block[ia + 1 : block.index(self.b_stmt)]


def plan_joint_setup(
    module: ModuleInfo, call: ast.Call, branches: Branches, other_modules: OtherModules = None
) -> Plan:
    """Plan the fix for the separated ``call`` (``R.setup_optimizers(...)``); ``other_modules``
    (word → the project's other modules mentioning it) are searched for meta-device model
    creation when that matters."""
    a_stmt, a_call, same_block = find_module_setup(module, call)
    plan = Plan(module_setup=a_call)
    try:
        site = _site(module, call, a_stmt, a_call, same_block, branches)
        param_uses = _check_between(site)
        _check_meta_device(site, param_uses, branches, other_modules)
        edits = _edits(site, param_uses if site.renamed else [])
        _check_parses(site, edits)
    except NoFix as why:
        plan.reason, plan.related = str(why), why.related
        return plan
    plan.fix, plan.notes = _fix(site, edits, branches)
    return plan


def _site(module, call, a_stmt, a_call, same_block: bool, branches: Branches) -> _Site:
    if a_call is None or a_stmt is None:
        raise NoFix("no module setup found before it; pass the model and optimizer(s) to `setup(...)` together")
    if not same_block:
        raise NoFix("the module is set up in a different block; merge the two calls into one `setup(...)` by hand")
    b_stmt = module.stmt_of(call)
    one_line = a_stmt is b_stmt
    if not one_line and _call_of_stmt(b_stmt) is not call:
        raise NoFix("the `setup_optimizers` call is part of a larger expression; rewrite it by hand")
    _check_optimizer_arguments(call, branches, one_line)
    _check_module_setup_keywords(a_call)
    t_m, t_o = _one_line_targets(b_stmt) if one_line else (_target_of(a_stmt), _target_of(b_stmt))
    _check_targets(t_m, t_o, len(call.args))
    if not (_whole_lines(module, a_stmt) and _whole_lines(module, b_stmt)):
        raise NoFix("the calls share their lines with other statements")
    return _Site(module, call, a_stmt, a_call, b_stmt, t_m, t_o, one_line)  # type: ignore[arg-type]


def _check_optimizer_arguments(call: ast.Call, branches: Branches, one_line: bool) -> None:
    if call.keywords or any(isinstance(a, ast.Starred) for a in call.args) or not call.args:
        raise NoFix("the optimizers are passed in a form that cannot be rewritten automatically")
    n_opt = len(call.args)
    if n_opt > 1 and branches.deepspeed_possible:
        raise NoFix(
            f"DeepSpeed accepts exactly one optimizer in `setup(...)` and {n_opt} are passed; "
            "combine them (e.g. parameter groups) or choose another strategy"
        )
    if one_line and not all(_is_ref_chain(a) for a in call.args):
        # evaluated after the module setup today, before it in `setup(...)`: only plain references keep their value
        raise NoFix("the optimizers are built inside the one-line setup; build them before it and pass them by name")


def _check_module_setup_keywords(a_call: ast.Call) -> None:
    if any(kw.arg is None or kw.arg not in MODULE_SETUP_KEYWORDS for kw in a_call.keywords):
        raise NoFix("the module setup has keyword arguments `setup(...)` does not take")


def _one_line_targets(stmt: ast.stmt) -> tuple[ast.AST, ast.AST]:
    target = stmt.targets[0]  # type: ignore[attr-defined]  # checked by _one_line_pair
    return target.elts[0], target.elts[1]


def _check_targets(t_m: ast.AST | None, t_o: ast.AST | None, n_opt: int) -> None:
    if t_m is None:
        raise NoFix("the result of the module setup is discarded; keep the wrapped model")
    if not _is_ref_chain(t_m) or (
        t_o is not None and not isinstance(t_o, (ast.Name, ast.Attribute, ast.Tuple, ast.List))
    ):
        raise NoFix("the set-up objects are assigned to targets that cannot be combined")
    if isinstance(t_o, (ast.Tuple, ast.List)):
        if len(t_o.elts) != n_opt or not all(_is_ref_chain(e) for e in t_o.elts):
            raise NoFix("the optimizer targets do not match the optimizers passed")
    elif t_o is not None and n_opt > 1:
        raise NoFix("several optimizers are assigned to one name; unpack them explicitly")


# -- def-use checks over the statements between and the optimizer arguments -------------------


def _check_between(site: _Site) -> list[ast.expr]:
    """Check that the statements between can move above the joint call; the uses of the set-up
    model through ``.parameters()``-like calls (which the rewrite points at the raw model)."""
    for stmt in site.between:
        _check_moved_statement(site, stmt)
    param_uses: list[ast.expr] = []
    for root in [*site.between, *site.call.args]:
        ok, bad = _uses(root, site.t_m, site.module.parent_of)
        if bad:
            raise NoFix(
                f"the set-up model `{site.module.segment(site.t_m)}` is used between the two calls; "
                "move that use after a joint `setup(...)` by hand",
                Related("The set-up model is used here", site.module.span(bad[0])),
            )
        param_uses += ok
    if site.renamed and not _is_ref_chain(site.m_expr):
        if param_uses:
            raise NoFix(
                f"the optimizer is built from the set-up model `{site.module.segment(site.t_m)}` and the raw model is not a plain name"
            )
        if site.between:
            raise NoFix("the model expression would be evaluated after the statements between the calls")
    return param_uses


def _check_moved_statement(site: _Site, stmt: ast.stmt) -> None:
    early = _leaves_block(stmt)
    if early is not None:
        raise NoFix(
            "a statement between the two calls may leave the block",
            Related("May leave the block here", site.module.span(early)),
        )
    for expr, what in (
        (site.receiver, "the Fabric object"),
        (site.m_expr, "the model passed to the module setup"),
        (site.t_m, "the set-up model"),
    ):
        if _rebinds(stmt, expr):
            raise NoFix(
                f"{what} is reassigned between the two calls", Related("Reassigned here", site.module.span(stmt))
            )
    for kw in site.a_call.keywords:
        if _rebinds(stmt, kw.value):
            raise NoFix(
                f"`{kw.arg}` depends on a name reassigned between the calls",
                Related("Reassigned here", site.module.span(stmt)),
            )
    sensitive = _fabric_calls(stmt, site.receiver, [site.m_expr, site.t_m, *site.call.args])
    if sensitive is not None:
        raise NoFix(
            f"`{site.module.segment(sensitive.func)}` between the two calls needs the model set up first",
            Related("Needs the set-up model", site.module.span(sensitive)),
        )


def _check_meta_device(
    site: _Site, param_uses: list[ast.expr], branches: Branches, other_modules: OtherModules
) -> None:
    """After the rewrite every optimizer is built before the joint setup. Where the model may then
    hold meta-device parameters and a possible strategy's joint setup refuses them (FSDP,
    ``fabric.py:1208``), the joint setup raises on that branch: no fix (not even an unsafe one:
    the rewrite would trade a working FSDP branch for a failing one)."""
    if not branches.meta_sensitive:
        return
    _check_optimizer_over_meta(site, branches)
    if not (param_uses or _moved_model_reads(site)):
        return
    evidence = meta_device_evidence(site.module, other_modules)
    if evidence is not None:
        where = f" in {os.path.basename(evidence.path)}" if evidence.path else ""
        raise NoFix(
            f"the model may be created on the meta device (`{evidence.message}`{where}) and the optimizer is built "
            f"after the model is set up; the rewrite builds it before, and under {' or '.join(branches.meta_sensitive)} "
            f"joint setup of an optimizer over meta-device parameters raises {_META_MESSAGE}, so {_BY_HAND}",
            Related(
                f"The model may be created on the meta device here: `{evidence.message}`", evidence.span, evidence.path
            ),
        )


_META_MESSAGE = 'RuntimeError ("The optimizer has references to the model\'s meta-device parameters")'
_BY_HAND = (
    "set up jointly only `if isinstance(fabric.strategy, (DeepSpeedStrategy, XLAStrategy))` "
    "and keep the separate setup on the other branch"
)


def _check_optimizer_over_meta(site: _Site, branches: Branches) -> None:
    """An optimizer built before the module setup from a model created on the meta device (and
    not materialized): the joint setup raises on it under FSDP, as ``setup_optimizers`` does
    today (``fabric.py:1237``), so the rewrite leaves that branch failing."""
    for optimizer in site.call.args:
        built, _ = optimizer_construction(site.module, optimizer, site.call)
        if built is None or _after(built, site.a_stmt):
            continue  # built in the call or between the calls: `_moved_model_reads` judges it
        found = meta_parameters(site.module, optimizer, site.call)
        if found is None:
            continue
        module, ctx = site.module, found.context.item
        raise NoFix(
            f"the optimizer is built from meta-device parameters (`{module.segment(found.model)}` is created under "
            f"`{module.segment(ctx)}`) before the model is set up; under {' or '.join(branches.meta_sensitive)} "
            f"joint setup raises {_META_MESSAGE} on them, as `setup_optimizers` does today: build the optimizer from the "
            f"set-up model after `setup_module` on that branch, and {_BY_HAND}",
            Related("The model is created on the meta device here", module.span(ctx)),
        )


def _after(a: ast.stmt, b: ast.stmt) -> bool:
    return (a.lineno, a.col_offset) > (b.lineno, b.col_offset)


def _moved_model_reads(site: _Site) -> list[ast.AST]:
    """What the rewrite moves above the joint setup that reads model parameters: a
    ``.parameters()``-like call on anything, or the raw model itself (passed to a helper)."""
    raw = _key(site.m_expr)
    found: list[ast.AST] = []
    for root in [*site.between, *site.call.args]:
        for n in walk(root):
            parameters = (
                isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in PARAMETER_METHODS
            )
            if parameters or (
                isinstance(n, (ast.Name, ast.Attribute)) and isinstance(n.ctx, ast.Load) and _key(n) == raw
            ):
                found.append(n)
    return found


# -- edits -----------------------------------------------------------------------------------


def _edits(site: _Site, rename_nodes: list[ast.expr]) -> list[Edit]:
    """Remove the module setup, point moved uses of a renamed set-up model at the raw model,
    and replace ``setup_optimizers`` by the joint call."""
    module, lines = site.module, site.module.lines
    edits = [] if site.one_line else [_removal(module, site.a_stmt)]
    in_call_args = {id(n) for a in site.call.args for n in walk(a)}
    m_src = module.segment(site.m_expr)
    in_call = [n for n in rename_nodes if id(n) in in_call_args]
    edits += [
        Edit(Span(lines.node_start(n), lines.node_end(n)), m_src) for n in rename_nodes if id(n) not in in_call_args
    ]
    edits.append(
        Edit(Span(lines.node_start(site.b_stmt), lines.node_end(site.b_stmt)), _joint_statement(site, in_call))
    )
    return edits


def _removal(module: ModuleInfo, stmt: ast.stmt) -> Edit:
    """Remove ``stmt``'s lines, keeping a comment that followed it."""
    lines = module.lines
    start, end = lines.node_start(stmt), lines.node_end(stmt)
    trailing = lines.content(end.line)[end.col :].strip()
    if trailing:
        indent = lines.indentation(start.line)
        return Edit(Span(Pos(start.line, 0), Pos(end.line, len(lines.content(end.line)))), indent + trailing)
    if end.line + 1 < len(lines):
        return Edit(Span(Pos(start.line, 0), Pos(end.line + 1, 0)), "")
    if start.line > 0:  # last line of the file: remove the preceding line break instead
        prev = lines.line(start.line - 1)
        return Edit(
            Span(Pos(start.line - 1, len(prev.rstrip("\r\n"))), Pos(end.line, len(lines.content(end.line)))), ""
        )
    return Edit(Span(Pos(start.line, 0), Pos(end.line, len(lines.line(end.line)))), "")


def _joint_statement(site: _Site, in_call: list[ast.expr]) -> str:
    module = site.module
    m_src = module.segment(site.m_expr)
    args = [m_src]
    args += [_segment_with_renames(module, a, in_call, m_src) for a in site.call.args]
    args += [module.segment(kw) for kw in site.a_call.keywords]
    return f"{', '.join(_joint_targets(site))} = {module.segment(site.receiver)}.setup({', '.join(args)})"


def _joint_targets(site: _Site) -> list[str]:
    module, t_o = site.module, site.t_o
    targets = [module.segment(site.t_m)]
    if t_o is None:
        # the script goes on using the optimizer by its own name: bind the wrapped one to it
        return targets + [module.segment(a) if _is_ref_chain(a) else "_" for a in site.call.args]
    if isinstance(t_o, (ast.Tuple, ast.List)):
        return targets + [module.segment(e) for e in t_o.elts]
    return targets + [module.segment(t_o)]


def _segment_with_renames(module: ModuleInfo, arg: ast.AST, in_call: list[ast.expr], m_src: str) -> str:
    """The source of ``arg`` with the renamed set-up model inside it replaced by the raw model."""
    lines = module.lines
    text = module.segment(arg)
    base = lines.offset(lines.node_start(arg))
    inside = {id(n) for n in walk(arg)}
    for n in sorted((n for n in in_call if id(n) in inside), key=lambda n: (n.lineno, n.col_offset), reverse=True):
        s = lines.offset(lines.node_start(n)) - base
        e = lines.offset(lines.node_end(n)) - base
        text = text[:s] + m_src + text[e:]
    return text


def _check_parses(site: _Site, edits: list[Edit]) -> None:
    """The result must parse, and nothing may overlap: every edit lies between the two calls'
    statements, siblings of one block, so parsing that region (dedented by the block's
    indentation) proves it; when it cannot be dedented, the enclosing top-level statements."""
    try:
        if not _region_parses(site.module, site.a_stmt, site.b_stmt, edits):
            _top_level_parses(site.module, edits)
    except (SyntaxError, ValueError) as exc:
        raise NoFix(f"the rewrite would not parse ({exc})") from None


def _fix(site: _Site, edits: list[Edit], branches: Branches) -> tuple[Fix, list[str]]:
    unsafe_why = []
    if site.t_o is None:
        unsafe_why.append("the optimizer returned by `setup_optimizers` was discarded; the fix rebinds it")
    if not branches.all_accept:
        unsafe_why.append("not every strategy this code may choose is known to accept joint setup")
    title = f"Set up model and optimizer jointly with `{site.module.segment(site.receiver)}.setup(...)`"
    if unsafe_why:
        return Fix(title + " (unsafe)", Applicability.UNSAFE, tuple(edits)), unsafe_why
    return Fix(title, Applicability.SAFE, tuple(edits)), []
