"""Where parameters may be created on the meta device (rule-free).

Two questions: does a file (or another module of the project) create meta-device parameters
anywhere (a coarse text-and-call scan, for a rewrite that must not break such a model), and is
one statement inside a ``with`` that creates them (``fabric.init_module(empty_init=...)``,
``torch.device("meta")``)."""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass
from typing import Callable, Optional

from fabric_lsp.engine.findings import Pos, Related, Span
from fabric_lsp.engine.python.astwalk import walk
from fabric_lsp.engine.python.modules import FUNC_TYPES, ModuleInfo

#: word → the project's other modules whose text mentions it
OtherModules = Optional[Callable[[str], list[ModuleInfo]]]

_META_KEYWORD = re.compile(r"""\bdevice\s*=\s*["']meta["']""")


def meta_device_evidence(module: ModuleInfo, other_modules: OtherModules = None) -> Related | None:
    """Where the file, or else another module of the workspace, may create parameters on the
    meta device: ``init_module(empty_init=...)`` unless ``empty_init`` is literally false,
    ``torch.device("meta")``, or a ``device="meta"`` argument (message: the code; path None for
    ``module`` itself). The model may be built by a helper anywhere in the project, so any such
    place counts."""
    found = _meta_device_in(module)
    if found is not None or other_modules is None:
        return found
    for word in ("init_module", "meta"):
        for other in other_modules(word):
            found = _meta_device_in(other)
            if found is not None:
                return Related(found.message, found.span, other.path)
    return None


def _meta_device_in(module: ModuleInfo) -> Related | None:
    """The first place in ``module`` that may create meta-device parameters."""
    for call in module.calls_by_name.get("init_module", []):
        empty = [kw.value for kw in call.keywords if kw.arg == "empty_init"] + call.args[:1]
        if any(not (isinstance(e, ast.Constant) and not e.value) for e in empty):
            return Related(module.segment(call), module.span(call))
    for call in module.calls_by_name.get("device", []):
        if _is_meta_device(call):
            return Related(module.segment(call), module.span(call))
    m = _META_KEYWORD.search(module.text)
    if m is not None:
        return Related(m.group(0), Span(_pos(module, m.start()), _pos(module, m.end())))
    return None


def _pos(module: ModuleInfo, offset: int) -> Pos:
    line = bisect.bisect_right(module.lines.starts, offset) - 1
    return Pos(line, offset - module.lines.starts[line])


def _is_meta_device(call: ast.Call) -> bool:
    """``torch.device("meta")`` / ``device("meta")``."""
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
    return (
        name == "device" and bool(call.args) and isinstance(call.args[0], ast.Constant) and call.args[0].value == "meta"
    )


@dataclass(frozen=True)
class MetaContext:
    """A ``with`` item whose body creates parameters on the meta device."""

    item: ast.Call
    #: True: it certainly does (``empty_init=True``, ``torch.device("meta")``); False: it does when
    #: a value not known statically is true (``empty_init=flag``)
    certain: bool


def meta_context(module: ModuleInfo, node: ast.AST) -> MetaContext | None:
    """The innermost ``with`` around ``node`` (in its function) that creates meta-device
    parameters: ``X.init_module(empty_init=E)`` with ``E`` not literally false (Fabric's FSDP and
    ModelParallel strategies enter ``torch.device("meta")`` when it is true, 2.6.6
    ``strategies/fsdp.py:342``, ``strategies/model_parallel.py:201``), or ``torch.device("meta")``."""
    cur = module.parent_of(node)
    while cur is not None and not isinstance(cur, (*FUNC_TYPES, ast.Lambda, ast.ClassDef)):
        if isinstance(cur, (ast.With, ast.AsyncWith)):
            for item in cur.items:
                found = _meta_item(item.context_expr)
                if found is not None:
                    return found
        cur = module.parent_of(cur)
    return None


def _meta_item(expr: ast.expr) -> MetaContext | None:
    if not isinstance(expr, ast.Call):
        return None
    if _is_meta_device(expr):
        return MetaContext(expr, True)
    if not (isinstance(expr.func, ast.Attribute) and expr.func.attr == "init_module"):
        return None
    given = [kw.value for kw in expr.keywords if kw.arg == "empty_init"] + expr.args[:1]
    if not given:
        return None  # empty_init=None: no meta device
    value = given[0]
    if isinstance(value, ast.Constant):
        return MetaContext(expr, True) if value.value else None
    return MetaContext(expr, False)


@dataclass(frozen=True)
class MetaParameters:
    """An optimizer built from the parameters of a model created on the meta device."""

    context: MetaContext
    model: ast.expr  # the model whose ``.parameters()`` the optimizer takes
    created: ast.stmt  # where that model was created
    #: the model certainly holds meta-device parameters at the call: the context is certain, and
    #: the model's one assignment before the call is reached on every path to it
    certain: bool


def _position(node: ast.AST) -> tuple[int, int]:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def _assignments(module: ModuleInfo, name: str, before: ast.AST) -> list[ast.stmt]:
    """The statements of ``before``'s scope that assign the plain name ``name`` before it, in order."""
    scope = module.scope_of(before)
    limit = _position(before)
    found: list[ast.stmt] = []
    for node in walk(scope):
        end = (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or end > limit:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        stored = {n.id for t in targets for n in walk(t) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        if name in stored and module.scope_of(node) is scope:
            found.append(node)
    return sorted(found, key=_position)


def _unconditional(module: ModuleInfo, stmt: ast.stmt, scope: ast.AST) -> bool:
    """Only ``with`` blocks lie between ``stmt`` and its scope (no branch, loop or ``try``)."""
    cur = module.parent_of(stmt)
    while cur is not None and cur is not scope:
        if not isinstance(cur, (ast.With, ast.AsyncWith)):
            return False
        cur = module.parent_of(cur)
    return True


def _parameter_sources(expr: ast.AST) -> list[ast.expr]:
    """``m`` of every ``m.parameters()`` / ``m.named_parameters()`` in ``expr`` (``m`` a plain name)."""
    return [
        n.func.value
        for n in walk(expr)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr in ("parameters", "named_parameters")
        and isinstance(n.func.value, ast.Name)
    ]


#: Module methods that give meta-device parameters real storage in place.
MATERIALIZING_METHODS = frozenset({"to_empty"})


def _materialized(module: ModuleInfo, name: str, created: ast.stmt, before: ast.AST) -> bool:
    """Whether ``name.to_empty(...)`` or ``name.load_state_dict(..., assign=True)`` runs in the
    scope between the model's creation and ``before`` (the parameters are then real)."""
    lo = (getattr(created, "end_lineno", 0) or 0, getattr(created, "end_col_offset", 0) or 0)
    hi = _position(before)
    for node in walk(module.scope_of(before)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and lo <= _position(node) < hi):
            continue
        if not (isinstance(node.func.value, ast.Name) and node.func.value.id == name):
            continue
        assign = any(
            kw.arg == "assign" and not (isinstance(kw.value, ast.Constant) and not kw.value.value)
            for kw in node.keywords
        )
        if node.func.attr in MATERIALIZING_METHODS or (node.func.attr == "load_state_dict" and assign):
            return True
    return False


def optimizer_construction(module: ModuleInfo, optimizer: ast.expr, at: ast.AST) -> tuple[ast.stmt | None, ast.expr]:
    """Where the optimizer passed as ``optimizer`` at ``at`` is built: (the assignment of the plain
    name ``optimizer`` in the scope before ``at``, its value), or (None, ``optimizer``) for an
    optimizer built in the call itself or not found."""
    if isinstance(optimizer, ast.Name):
        assigned = _assignments(module, optimizer.id, at)
        if assigned and getattr(assigned[-1], "value", None) is not None:
            return assigned[-1], assigned[-1].value  # type: ignore[attr-defined]
    return None, optimizer


def meta_parameters(module: ModuleInfo, optimizer: ast.expr, at: ast.AST) -> MetaParameters | None:
    """Whether the optimizer passed as ``optimizer`` at ``at`` is built from the parameters of a
    model created inside a ``with`` that puts parameters on the meta device (see :func:`meta_context`)."""
    stmt, value = optimizer_construction(module, optimizer, at)
    built_at = stmt if stmt is not None else at
    scope = module.scope_of(at)
    for source in _parameter_sources(value):
        assert isinstance(source, ast.Name)
        created = _assignments(module, source.id, built_at)
        if not created:
            continue
        context = meta_context(module, created[-1])
        if context is None or _materialized(module, source.id, created[-1], built_at):
            continue
        certain = context.certain and len(created) == 1 and _unconditional(module, created[-1], scope)
        if stmt is not None:
            certain = certain and _unconditional(module, stmt, scope)
        return MetaParameters(context, source, created[-1], certain)
    return None
