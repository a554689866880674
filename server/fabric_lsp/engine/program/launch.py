"""Where is a Fabric launched, and is the script meant for ``fabric run``? (FAB007's questions.)

* :func:`launches_of` — the ``launch(...)`` calls (and ``run()`` calls, which a Fabric subclass's
  overridden ``run`` turns into a launch: ``fabric.py:1185-1191``) whose receiver may be a given
  Fabric, in the document and in every workspace module that mentions ``launch``; and whether a
  ``launch`` call on a receiver inference cannot resolve could be it.
* :func:`launch_around` — a ``launch()`` on the same receiver before the call in the same function
  (launched; or launched only on several devices, ``if fabric.world_size > 1: fabric.launch()``),
  or only after it (the Fabric is used before it is launched).
* :func:`first_needing_launch` — the first call in the document, in source order, of a method that
  checks ``_validate_launched()`` on a given Fabric (where a missing launch is reported).
* :func:`cli_evidence` — whether the repository shows the script may be run by the Fabric CLI
  (``fabric run``, ``lightning run model``, ``LT_CLI_USED``): the document itself (comments,
  docstrings) and the text files of the workspace (README, shell and batch scripts, configs,
  Makefiles). Under the CLI, ``Fabric.__init__`` sets up the processes (``fabric.py:164``) and no
  ``launch()`` is needed.
"""

from __future__ import annotations

import ast
import os
import re
import time
from collections.abc import Iterator
from typing import NamedTuple, Protocol

from fabric_lsp import facts
from fabric_lsp.engine.program.infer import Inference
from fabric_lsp.engine.program.receivers import not_a_fabric
from fabric_lsp.engine.python.flow import conditions, enclosing_function
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.python.values import FabricInst, FuncRef, PartialVal, Unknown, Value
from fabric_lsp.engine.workspace.dependencies import TEXT_FILES
from fabric_lsp.engine.workspace.files import text_files
from fabric_lsp.engine.workspace.memo import AskedOnce
from fabric_lsp.engine.workspace.workspace import Workspace


class SemanticModel(Protocol):
    """What the launch questions read of the semantic model
    (:class:`fabric_lsp.engine.semantic.model.SemanticModel`, which asks them)."""

    module: ModuleInfo
    workspace: Workspace
    inference: Inference
    asked_once: AskedOnce

    @property
    def path(self) -> str | None: ...
    def method_calls(self, name: str) -> list[ast.Call]: ...
    def values(self, expr: ast.AST) -> list[Value]: ...
    def receiver_fabrics(self, call: ast.Call, *, by_type: bool = True) -> tuple[list[FabricInst], list[Unknown]]: ...


CLI_RUN = re.compile(facts.CLI_RUN_PATTERN)
#: the name of a count of devices, in a test that lets a ``launch()`` run on several only
SEVERAL_DEVICES = re.compile(r"device|gpu|world_size|nproc|num_proc", re.IGNORECASE)
#: a backslash that continues a command line on the next one
CONTINUATION = re.compile(r"\\\r?\n")
#: the Fabric CLI run from Python as an argument list (``subprocess.run(["fabric", "run", ...])``)
LIST_RUN = re.compile(
    r"""[\[(]\s*(?:["']fabric["']\s*,\s*["']run["']|["']lightning["']\s*,\s*["']run["']\s*,\s*["']model["'])"""
)
MAX_TEXT_BYTES = 256 * 1024
EVIDENCE_TTL = 10.0


class Evidence(NamedTuple):
    path: str | None  # None: the analysed document
    line: int  # 0-based
    text: str
    #: the file names of the scripts the command runs (``train.py`` for ``fabric run … train.py``)
    scripts: frozenset[str] = frozenset()


#: a Python file name written in a command or a string literal
SCRIPT_NAME = re.compile(r"""([\w.-]+\.py)\b""")

_evidence_cache: dict[str, tuple[float, list[Evidence]]] = {}


def fabric_key(fabric: FabricInst) -> tuple | None:
    return None if fabric.origin is None else (fabric.origin.path, fabric.origin.span)


def _receiver_fabrics(
    model: SemanticModel, call: ast.Call, module: ModuleInfo, by_type: bool = True
) -> tuple[list[FabricInst], bool]:
    """The Fabrics the receiver of ``call`` may be, and whether it may be something not known
    (``by_type``: a Fabric known only by its type as well, in the document)."""
    assert isinstance(call.func, ast.Attribute)
    if module is model.module:
        fabrics, unknown = model.receiver_fabrics(call, by_type=by_type)
        return fabrics, bool(unknown)
    # another module's launch call: the same answer for every analysis that looks for launches
    # (asked once per analysis, and shared where it reads nothing of the analysed document)
    key = ("launch receiver", id(call))
    return model.asked_once(key, lambda: _other_receiver_fabrics(model, call, module), (call, module))


def _other_receiver_fabrics(model: SemanticModel, call: ast.Call, module: ModuleInfo) -> tuple[list[FabricInst], bool]:
    assert isinstance(call.func, ast.Attribute)
    values = model.inference.evaluate(call.func.value, module)
    values = model.inference.method_receivers(values, call.func.attr, module)
    return [v for v in values if isinstance(v, FabricInst)], any(isinstance(v, Unknown) for v in values)


def _launch_calls(model: SemanticModel, fabric: FabricInst) -> Iterator[tuple[ModuleInfo, ast.Call, bool]]:
    """(module, call, certain) for each ``launch``/``run()`` call that launches ``fabric``
    (certain) or a ``launch`` call on an unresolved receiver that may (not certain). The document
    comes first; other modules are read only when needed."""
    key = fabric_key(fabric)
    yield from _launch_calls_in(model, model.module, key)
    others = model.workspace.modules_mentioning("launch", exclude=model.path)
    if fabric.class_name != "Fabric":  # a subclass: its overridden run() is wrapped in a launch
        others += [m for m in model.workspace.modules_mentioning("run", exclude=model.path) if m not in others]
    for module in others:
        yield from _launch_calls_in(model, module, key)


def _launch_calls_in(
    model: SemanticModel, module: ModuleInfo, key: tuple | None
) -> Iterator[tuple[ModuleInfo, ast.Call, bool]]:
    for name in ("launch", "run"):
        for call in module.calls_named(name):
            if not isinstance(call.func, ast.Attribute) or call.func.attr != name:
                continue
            # a Fabric known only by its type has no origin: it is ``key`` only when ``key`` is None
            fabrics, unknown = _receiver_fabrics(model, call, module, by_type=key is None)
            if any(fabric_key(f) == key for f in fabrics):
                yield module, call, True
            elif name == "launch" and (
                any(f.origin is None for f in fabrics)
                or _may_hold(model, module, call, unknown)
                or (unknown and not fabrics and _by_type(model, call, module))
            ):
                yield module, call, False


def _by_type(model: SemanticModel, call: ast.Call, module: ModuleInfo) -> bool:
    """Whether the receiver of ``call``, not known, is a Fabric by its type (jedi)."""
    return any(f.origin is None for f in _receiver_fabrics(model, call, module)[0])


def _may_hold(model: SemanticModel, module: ModuleInfo, call: ast.Call, unknown: bool) -> bool:
    """Whether the receiver of ``call``, not known (``unknown``), may be a Fabric: not when it is
    certainly something else (a library's object, a strategy's launcher: :mod:`receivers`)."""
    return unknown and not not_a_fabric(model.inference, module, call.func.value)  # type: ignore[attr-defined]


def launches_of(model: SemanticModel, fabric: FabricInst) -> tuple[list[tuple[ModuleInfo, ast.Call]], bool]:
    """The launch (and ``run()``) calls on ``fabric``, and whether an unresolved ``launch`` call
    may launch it."""
    found: list[tuple[ModuleInfo, ast.Call]] = []
    maybe = False
    for module, call, certain in _launch_calls(model, fabric):
        if certain:
            found.append((module, call))
        else:
            maybe = True
    return found, maybe


def may_be_launched(model: SemanticModel, fabric: FabricInst) -> bool:
    """Whether some ``launch`` call may launch ``fabric`` (stops at the first)."""
    return next(_launch_calls(model, fabric), None) is not None


def in_overridden_run(model: SemanticModel, call: ast.Call) -> bool:
    """Whether ``call`` is on ``self`` in a method ``run`` of a class: a Fabric subclass's ``run``
    runs launched (``fabric.py:1191`` wraps it in ``_wrap_and_launch``)."""
    func = enclosing_function(model.module, call)
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    return (
        isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef))
        and func.name == "run"
        and isinstance(model.module.parent_of(func), ast.ClassDef)
        and isinstance(receiver, ast.Name)
        and receiver.id == "self"
    )


class Around(NamedTuple):
    """The ``launch()`` calls on a call's receiver in its function: the one that runs before it
    (None: none does), the first after it, and — when the one before runs only on several
    devices (``if fabric.world_size > 1: fabric.launch()``) — that test, and whether it tests the
    receiver's own ``world_size`` (else a count of the machine's devices or a variable)."""

    before: ast.Call | None
    later: ast.Call | None
    only_if: ast.expr | None = None
    own_world_size: bool = False


def launch_around(model: SemanticModel, call: ast.Call) -> Around:
    """The ``launch(...)`` calls on the receiver of ``call`` in the same function: one before it
    (one that runs whenever ``call`` does, if there is one), else the first after it."""
    assert isinstance(call.func, ast.Attribute)
    receiver = ast.dump(call.func.value)
    scope = enclosing_function(model.module, call)
    first, last = getattr(scope, "lineno", 0), getattr(scope, "end_lineno", None) or 10**9
    later: ast.Call | None = None
    guarded: Around | None = None
    # inside a function, only its own statement is read (and depended on)
    launches = model.module.calls_within(scope, "launch") if scope is not None else model.method_calls("launch")
    for launch in launches:
        if not isinstance(launch.func, ast.Attribute) or not first <= launch.lineno <= last:
            continue  # the cheap test first
        if ast.dump(launch.func.value) != receiver or enclosing_function(model.module, launch) is not scope:
            continue
        if (launch.lineno, launch.col_offset) > (call.lineno, call.col_offset):
            later = later or launch
            continue
        test = _several_devices_only(model, launch, call)
        if test is None:
            return Around(launch, None)
        guarded = guarded or Around(launch, None, test, _is_world_size(test, receiver))
    return guarded or Around(None, later)


def _several_devices_only(model: SemanticModel, launch: ast.Call, call: ast.Call) -> ast.expr | None:
    """The test that lets ``launch`` run only on more than one device and does not hold ``call``
    (``if torch.cuda.device_count() > 1: fabric.launch()``); None when no such test guards it, or
    when another test guards it too (the launch may be on another path than the call, as before)."""
    shared = {id(test) for test, _ in conditions(model.module, call)}
    found: ast.expr | None = None
    for test, truth in conditions(model.module, launch):
        if id(test) in shared:
            continue
        # `if torch.cuda.is_available() and fabric.accelerator.auto_device_count() > 1:` holds only if each part does
        parts = test.values if truth and isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        several = next((p for p in parts if truth and isinstance(p, ast.Compare) and _several(p)), None)
        if several is None:
            return None
        found = found or several
    return found


def _several(test: ast.Compare) -> bool:
    """``<count> > 1``, ``>= 2`` or ``!= 1``, where the count names devices, GPUs or the world size."""
    if len(test.ops) != 1 or not isinstance(test.comparators[0], ast.Constant):
        return False
    op, bound = test.ops[0], test.comparators[0].value
    if (type(op), bound) not in ((ast.Gt, 1), (ast.GtE, 2), (ast.NotEq, 1)):
        return False
    name = _count_name(test.left)
    return name is not None and SEVERAL_DEVICES.search(name) is not None


def _count_name(expr: ast.AST) -> str | None:
    if isinstance(expr, ast.Call):
        if isinstance(expr.func, ast.Name) and expr.func.id == "len" and len(expr.args) == 1:
            return _count_name(expr.args[0])
        return _count_name(expr.func)
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return expr.id if isinstance(expr, ast.Name) else None


def _is_world_size(test: ast.expr, receiver: str) -> bool:
    left = test.left if isinstance(test, ast.Compare) else None
    return (
        isinstance(left, ast.Attribute) and left.attr == facts.WORLD_SIZE_ATTRIBUTE and ast.dump(left.value) == receiver
    )


def first_needing_launch(model: SemanticModel, fabric: FabricInst) -> ast.Call | None:
    """The first call in the document of a method that needs a launched ``fabric``."""
    key = fabric_key(fabric)
    calls = sorted(
        (c for m in facts.NEEDS_LAUNCH for c in model.method_calls(m)), key=lambda c: (c.lineno, c.col_offset)
    )
    launched = _launched_functions(model)
    for call in calls:
        if launched and id(enclosing_function(model.module, call)) in launched:
            continue  # runs in the launched processes
        fabrics, _ = _receiver_fabrics(model, call, model.module, by_type=key is None)
        if any(fabric_key(f) == key for f in fabrics):
            return call
    return None


def _launched_functions(model: SemanticModel) -> set[int]:
    """The ``def``s of the document handed to a ``launch(...)`` (``launch(main)``,
    ``launch(function=main)``, ``launch(partial(main, ...))``): they run launched."""
    out: set[int] = set()
    for launch in model.method_calls("launch"):
        fn = launch.args[0] if launch.args else next((k.value for k in launch.keywords if k.arg == "function"), None)
        if fn is None or isinstance(fn, ast.Starred):
            continue
        for value in model.values(fn):
            funcs = value.funcs if isinstance(value, PartialVal) else (value,)
            out.update(id(f.node) for f in funcs if isinstance(f, FuncRef) and f.module is model.module)
    return out


# -- the Fabric CLI ----------------------------------------------------------------------------


def cli_evidence(model: SemanticModel) -> Evidence | None:
    """Where the document or the repository shows scripts run by ``fabric run``: the document
    itself, else a command of the repository that runs this very script, else the first one."""
    own = _search_text(model.module.text)
    if own is not None:
        return Evidence(None, *own)
    root = model.workspace.root
    if not root:
        return None
    model.workspace.record_listing(TEXT_FILES)
    now = time.monotonic()
    cached = _evidence_cache.get(root)
    if cached is None or now - cached[0] >= EVIDENCE_TTL:
        cached = _evidence_cache[root] = (now, _search_repository(root))
    found = cached[1]
    name = os.path.basename(model.path or "")
    return next((e for e in found if name and name in e.scripts), found[0] if found else None)


def _search_text(text: str) -> tuple[int, str, frozenset[str]] | None:
    """The first Fabric CLI command line in ``text``: its line, the command (a command
    continued over several lines with ``\\`` — READMEs, shell scripts — is read joined) and the
    scripts the text's commands run."""
    joined = CONTINUATION.sub(lambda m: " " * len(m.group()), text)  # same length: offsets stay those of ``text``
    matches = list(CLI_RUN.finditer(joined))
    if not matches:
        return None
    first = matches[0]
    command = joined.splitlines()[joined.count("\n", 0, first.start())]
    scripts = frozenset(os.path.basename(n) for m in matches for n in SCRIPT_NAME.findall(m.group()))
    return text.count("\n", 0, first.start()), " ".join(command.split())[:120], scripts


def _search_repository(root: str) -> list[Evidence]:
    """Every text file of the repository that runs scripts with the Fabric CLI."""
    out: list[Evidence] = []
    for path in text_files(root):
        try:
            if os.path.getsize(path) > MAX_TEXT_BYTES:
                continue
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError:
            continue
        found = _search_list(text) if path.endswith(".py") else _search_text(text)
        if found is not None:
            out.append(Evidence(path, *found))
    return out


def _search_list(text: str) -> tuple[int, str, frozenset[str]] | None:
    """A Python file of the repository that runs the Fabric CLI as an argument list (a launcher
    script: ``subprocess.run(["fabric", "run", "--devices=8", TRAIN])``); the scripts it may run
    are the Python file names its string literals hold (``TRAIN = "/root/train.py"``)."""
    match = LIST_RUN.search(text)
    if match is None:
        return None
    line = text.count("\n", 0, match.start())
    literals = re.findall(r"""["']([^"'\n]*\.py)["']""", text)
    scripts = frozenset(os.path.basename(x) for x in literals)
    return line, " ".join(text.splitlines()[line].split())[:120], scripts
