"""Questions about code that runs in a notebook (Lightning's ``_IS_INTERACTIVE``): which
``Fabric(...)`` calls a notebook executes in its own process, which of their configurations the
connector refuses there, and whether CUDA is visibly used before a point of the notebook.

Pure functions over the semantic model's data; no rule is imported.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from fabric_lsp import facts
from fabric_lsp.engine.lightning.configurations import Scenario
from fabric_lsp.engine.python.modules import FUNC_TYPES, ModuleInfo

#: callee names worth asking the evaluator about: ``Fabric(...)``, ``L.Fabric(...)``, subclasses
#: and factories named after them (``MyFabric``, ``make_fabric``, ``LightningLite`` subclasses)
_CANDIDATE_CALL = re.compile(r"\b(\w*(?:[Ff]abric|Lite)\w*)\s*\(")

#: visible CUDA use: moving a tensor or module to a GPU, or any ``torch.cuda`` call. A fork after
#: CUDA initialisation fails (launchers/multiprocessing.py:191-209); Lightning's docs
#: (fundamentals/notebooks.rst) also warn against device queries such as ``is_available()``
#: before the launch, which the 2.6.6 check tolerates: kept conservative (it only withholds a fix)
_CUDA_USE = re.compile(r"\.cuda\s*\(|\.to\s*\(\s*['\"]cuda|device\s*=\s*['\"]cuda|\btorch\.cuda\.\w+")


#: code that certainly initialises CUDA in the process that runs it (not device queries such as
#: ``torch.cuda.is_available()``/``device_count()``, which a fork tolerates): a tensor or module
#: moved to or created on a GPU, and the ``torch.cuda`` calls that create a context
_CUDA_INIT = re.compile(
    r"\.cuda\s*\(|\.to\s*\(\s*['\"]cuda|device\s*=\s*['\"]cuda|"
    r"\btorch\.cuda\.(?:init|set_device|synchronize|empty_cache|mem_get_info|current_stream|Stream|Event)\s*\("
)


#: how many calls deep :func:`runs_when_executed` follows a function to the document's top level
MAX_CALL_DEPTH = 4


def candidate_calls(module: ModuleInfo) -> list[ast.Call]:
    """Calls whose callee is named like a Fabric class or factory, in document order."""
    names = dict.fromkeys(m.group(1) for m in _CANDIDATE_CALL.finditer(module.text))
    calls = [c for name in names for c in module.calls_by_name.get(name)]
    return sorted(calls, key=lambda c: (c.lineno, c.col_offset))


def runs_when_executed(module: ModuleInfo, node: ast.AST, depth: int = 0) -> bool:
    """``node`` runs when the document's code runs top to bottom: at module or class level, or in
    a module-level function the document calls by name where that call runs (``main()`` in the
    last cell). A function only handed on (``fabric.launch(main)``, a process pool) does not."""
    scope = module.scope_of(node)
    while isinstance(scope, ast.ClassDef):
        scope = module.scope_of(scope)
    if not isinstance(scope, (*FUNC_TYPES, ast.Lambda)):
        return True
    if depth >= MAX_CALL_DEPTH or isinstance(scope, ast.Lambda) or module.scope_of(scope) is not module.tree:
        return False
    calls = module.calls_by_name.get(scope.name)
    return any(isinstance(c.func, ast.Name) and runs_when_executed(module, c, depth + 1) for c in calls)


def refused_interactively(scenario: Scenario) -> bool:
    """The connector raises its interactive-environment RuntimeError (connector.py:522)."""
    error = scenario.outcome.error if scenario.outcome is not None else None
    return error is not None and error.type == "RuntimeError" and facts.INTERACTIVE_ERROR in error.message


@dataclass(frozen=True)
class InteractiveJudgement:
    """How the scenarios of one Fabric fare in a notebook."""

    refused: tuple[Scenario, ...]  # known scenarios refused whatever the values not known
    accepted: tuple[Scenario, ...]  # known scenarios Lightning constructs
    unknown: tuple[Scenario, ...]  # not known, or refused only for some assumed values

    @property
    def never_constructed(self) -> bool:
        """Refused in a notebook and constructed nowhere (other scenarios fail for other reasons)."""
        return bool(self.refused) and not self.accepted and not self.unknown


def judge(scenarios: list[Scenario]) -> InteractiveJudgement:
    """Split ``scenarios``: a scenario counts as refused only when every scenario of its group
    (the same written values and machine, assumed values varied) is refused."""
    groups: dict[tuple, list[Scenario]] = {}
    for s in scenarios:
        groups.setdefault(s.group, []).append(s)
    refused: list[Scenario] = []
    accepted: list[Scenario] = []
    unknown: list[Scenario] = []
    for group in groups.values():
        if all(s.known and refused_interactively(s) for s in group):
            refused += group
        elif all(s.known and s.outcome is not None and s.outcome.error is not None for s in group):
            continue  # refused for another reason: another rule's (or Lightning's own) business
        elif all(s.known and s.outcome is not None and s.outcome.error is None for s in group):
            accepted += group
        else:
            unknown += group
    return InteractiveJudgement(tuple(refused), tuple(accepted), tuple(unknown))


def cuda_initialised_before(module: ModuleInfo, node: ast.AST) -> int | None:
    """The 1-based line of the first statement before ``node``, run when the notebook runs (at
    its top level), that certainly initialises CUDA, if any."""
    end = module.lines.offset(module.lines.node_start(node))
    code = module.text[:end]
    lines = module.text.splitlines()
    for match in _CUDA_INIT.finditer(code):
        line = code.count("\n", 0, match.start()) + 1
        if lines[line - 1].lstrip().startswith("#"):
            continue
        top = module.top_for_line(line)
        if top is not None and not isinstance(top, (*FUNC_TYPES, ast.ClassDef)):
            return line
    return None


def cuda_used_before(module: ModuleInfo, node: ast.AST) -> int | None:
    """The 1-based line of the first visible CUDA use in the document before ``node``, if any."""
    end = module.lines.offset(module.lines.node_start(node))
    code = module.text[:end]
    for match in _CUDA_USE.finditer(code):
        line = code.count("\n", 0, match.start()) + 1
        stripped = module.text.splitlines()[line - 1].lstrip()
        if not stripped.startswith("#"):
            return line
    return None
