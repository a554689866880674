"""FAB002's fix: remove a rank guard whose body is only ``fabric.save(...)``/``fabric.load(...)``."""

from __future__ import annotations

import ast

from fabric_lsp.engine.findings import Applicability, Edit, Fix, Span
from fabric_lsp.engine.program.ranks import RankGuard, is_rank_expr
from fabric_lsp.engine.python.text import apply_edits
from fabric_lsp.engine.semantic.model import SemanticModel

FIXABLE = ("save", "load")


def _checkpoint_call(stmt: ast.stmt) -> ast.Call | None:
    value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in FIXABLE:
        return value
    return None


def _pure_rank_test(model: SemanticModel, test: ast.AST) -> bool:
    """A test that reads nothing but a rank (no other condition the fix would drop)."""
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if isinstance(test, ast.Attribute):
        return test.attr == "is_global_zero"
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        sides = (test.left, test.comparators[0])
        return any(is_rank_expr(model.module, s) for s in sides) and any(isinstance(s, ast.Constant) for s in sides)
    return False


def remove_guard(model: SemanticModel, call: ast.Call, guard: RankGuard) -> tuple[Fix | None, str]:
    """The fix, or (None, why not) — the reason is appended to the message."""
    holder = guard.holder
    if guard.how != "branch" or not isinstance(holder, ast.If) or guard.module is not model.module:
        return None, " (no automatic fix: the guard is not an `if` around the call)"
    if holder.orelse or not guard.truth:
        return None, " (no automatic fix: the `if` has an `else` branch)"
    calls = [_checkpoint_call(s) for s in holder.body]
    if any(c is None for c in calls) or not _pure_rank_test(model, holder.test):
        return (
            None,
            " (no automatic fix: the guarded block does more than `save`/`load`, or its test more than the rank)",
        )
    receivers = {model.segment(c.func.value) for c in calls if c is not None and isinstance(c.func, ast.Attribute)}
    if len(receivers) != 1:
        return None, " (no automatic fix: the block calls several objects)"
    edit = _dedent_edit(model, holder)
    new_text = apply_edits(model.module.text, [edit])
    if not _parses_cleanly(new_text):
        return None, ""
    loads = any(c is not None and isinstance(c.func, ast.Attribute) and c.func.attr == "load" for c in calls)
    applicability = Applicability.UNSAFE if loads else Applicability.SAFE
    title = "Remove the rank guard: every rank must call " + " and ".join(
        sorted({c.func.attr for c in calls if c is not None and isinstance(c.func, ast.Attribute)})
    )
    return Fix(title, applicability, (edit,)), ""


def _parses_cleanly(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


def _dedent_edit(model: SemanticModel, holder: ast.If) -> Edit:
    lines = model.module.lines
    start = lines.node_start(holder)
    first, last = holder.body[0], holder.body[-1]
    end = lines.node_end(last)
    if first.lineno == holder.lineno:  # `if test: fabric.save(...)` on one line
        text = model.module.text[lines.offset(lines.node_start(first)) : lines.offset(end)]
        return Edit(Span(start, end), text)
    body_indent = lines.node_start(first).col
    shift = body_indent - start.col
    out = []
    for i in range(first.lineno - 1, end.line + 1):
        line = lines.content(i) if i < end.line else lines.content(i)[: end.col]
        stripped = line[shift:] if line[:shift].strip() == "" else line.lstrip()
        out.append(stripped)
    out[0] = out[0].lstrip()
    text = "\n".join(out)
    if "\r\n" in model.module.text:
        text = text.replace("\n", "\r\n")
    return Edit(Span(start, end), text)
