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

from fabric_lsp.engine.model import Pos, Related, Span
from fabric_lsp.engine.modules import FUNC_TYPES, ModuleInfo

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
    return name == "device" and bool(call.args) and isinstance(call.args[0], ast.Constant) and call.args[0].value == "meta"


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
    cur = module.parents.get(node)
    while cur is not None and not isinstance(cur, (*FUNC_TYPES, ast.Lambda, ast.ClassDef)):
        if isinstance(cur, (ast.With, ast.AsyncWith)):
            for item in cur.items:
                found = _meta_item(item.context_expr)
                if found is not None:
                    return found
        cur = module.parents.get(cur)
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
