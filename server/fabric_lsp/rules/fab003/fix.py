"""FAB003's fix: ``<model>.mark_forward_method("name")`` inserted after the setup statement."""

from __future__ import annotations

import ast

from fabric_lsp import facts
from fabric_lsp.engine.findings import Applicability, Edit, Fix, Pos, Span
from fabric_lsp.engine.program.setups import FUNC_TYPES, SetupCall
from fabric_lsp.engine.python.modules import ModuleInfo


def mark_fix(
    module: ModuleInfo, call: ast.Call, setups: list[SetupCall], name: str, version: str
) -> tuple[Fix | None, str]:
    """The fix, or None and why none is offered."""
    if not facts.has_feature("mark_forward_method", version):
        return (
            None,
            f"Lightning {version} has no `mark_forward_method` (added in 2.3); call the method through `forward`",
        )
    edits: list[Edit] = []
    for setup in setups:
        edit, reason = _insertion(module, call, setup, name)
        if edit is None:
            return None, reason
        edits.append(edit)
    title = f"Mark `{name}` as a forward method after `fabric.setup`"
    return Fix(title, Applicability.SAFE, tuple(dict.fromkeys(edits))), ""


def _insertion(module: ModuleInfo, call: ast.Call, setup: SetupCall, name: str) -> tuple[Edit | None, str]:
    if setup.module is not module:
        return None, "the model is set up in another module"
    stmt = module.parent_of(setup.call)
    if not (isinstance(stmt, ast.Assign) and stmt.value is setup.call and len(stmt.targets) == 1):
        return None, "the result of `fabric.setup` is not assigned by a plain statement"
    target = stmt.targets[0]
    if isinstance(target, (ast.Tuple, ast.List)):
        target = target.elts[0] if target.elts else target
    if not _same_scope(module, call, stmt, target):
        return None, "the setup statement is not in the scope of the call (the model is passed in)"
    lines = module.lines
    start, end = lines.node_start(stmt), lines.node_end(stmt)
    before = lines.content(start.line)[: start.col]
    after = lines.content(end.line)[end.col :].strip()
    if before.strip() or (after and not after.startswith("#")):
        return None, "the setup statement shares its line with other code"
    text = f'{before}{module.segment(target)}.mark_forward_method("{name}")'
    try:
        ast.parse(text.strip())
    except SyntaxError:
        return None, "the inserted statement would not parse"
    newline = lines.line(end.line)[len(lines.content(end.line)) :]
    if not newline:  # the last line of the document has no terminator
        return Edit(
            Span(Pos(end.line, len(lines.content(end.line))), Pos(end.line, len(lines.content(end.line)))), "\n" + text
        ), ""
    at = Pos(end.line + 1, 0)
    return Edit(Span(at, at), text + newline), ""


def _same_scope(module: ModuleInfo, call: ast.Call, stmt: ast.AST, target: ast.AST) -> bool:
    """The model's name at the setup statement denotes it at the call: the same function (or module
    level), or ``self.<attr>`` set in a method of the call's class."""
    if isinstance(target, ast.Name):
        return module.scope_of(stmt) is module.scope_of(call)
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        a, b = module.scope_of(stmt), module.scope_of(call)
        if not (isinstance(a, FUNC_TYPES) and isinstance(b, FUNC_TYPES)):
            return False
        cls = module.enclosing_class(a)
        return (
            cls is not None
            and cls is module.enclosing_class(b)
            and _first_param(a) == target.value.id == _first_param(b)
        )
    return False


def _first_param(func: ast.AST) -> str | None:
    args = func.args.args  # type: ignore[attr-defined]
    return args[0].arg if args else None
