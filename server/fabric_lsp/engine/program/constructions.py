"""Where a document builds a Lightning Fabric, and whether the configuration it asks for can start.

``constructions(module, ev)``: the calls in the document that construct a Fabric — ``Fabric(...)``
under any import spelling, a project's subclass of Fabric, a ``functools.partial`` of either called
later. ``configuration_problems(scenarios)``: the errors (and the configuration-changing warnings)
Lightning 2.6.6 gives for each configuration the code can choose, with the machine assumption of
:mod:`fabric_lsp.engine.lightning.configurations` applied: a configuration fails only when it fails on *every*
machine it can mean (an error only on the CPU machine, for code that names no accelerator, is a
configuration meant for GPUs).
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from typing import Callable

from fabric_lsp import facts
from fabric_lsp.engine.lightning import connector as lightning
from fabric_lsp.engine.lightning import fabric_args
from fabric_lsp.engine.lightning.configurations import CONNECTOR_ARGS, Scenario
from fabric_lsp.engine.lightning.launch_checks import launch_error, missing_config_file, release_error
from fabric_lsp.engine.program.infer import OPAQUE_PACKAGES, Inference
from fabric_lsp.engine.python.bindings import Binding, block_bindings
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.python.values import Evaluator, PartialVal


def constructions(module: ModuleInfo, ev: Inference) -> list[ast.Call]:
    """The calls in ``module`` whose callee is a Fabric class (or a partial of one), in order."""
    if module.tree is None:
        return []
    partial = _makes_fabric_partials(module, ev)
    # the calls of each statement, walked once per version for every rule that asks; without
    # a partial, only statements whose text names a capitalised identifier can construct one
    body = module.tree.body
    tops = (
        body
        if partial
        else [body[i] for i in sorted({i for w, ids in module.index.items() if w[:1].isupper() for i in ids})]
    )
    calls = [n for top in tops for n in module.calls_in(top) if _may_be_class(n.func, partial)]
    out = [
        c
        for c in calls
        if not _of_opaque_package(module, c.func) and any(_is_fabric_callee(ev, v) for v in ev.evaluate(c.func, module))
    ]
    return sorted(out, key=lambda c: (c.lineno, c.col_offset))


def _makes_fabric_partials(module: ModuleInfo, ev: Inference) -> bool:
    """Whether a ``partial(...)`` of ``module`` may wrap a Fabric class: only then can a callee
    that is not capitalised (the partial, called later) construct a Fabric here."""
    if "partial" not in module.text:  # once: a search of the text per call would be quadratic
        return False
    return any(
        _is_fabric_callee(ev, v)
        for call in module.calls_named("partial")
        if call.args
        for v in ev.evaluate(call.args[0], module)
    )


def _of_opaque_package(module: ModuleInfo, func: ast.AST) -> bool:
    """Whether the callee is reached from a name the module binds only by importing a package
    the evaluator knows by name alone (``torch.optim.AdamW``, ``nn.Linear``, ``DataLoader``,
    ``collections.OrderedDict``): one of that package's classes, never a Fabric — no need to
    evaluate it. A callee named ``Fabric`` is always evaluated."""
    root = func
    while isinstance(root, ast.Attribute):
        if root.attr == "Fabric":
            return False
        root = root.value
    if not isinstance(root, ast.Name) or root.id == "Fabric":
        return False
    bindings = module.module_bindings(root.id, block_bindings)
    return bool(bindings) and all(_imported_package(b) in OPAQUE_PACKAGES for b in bindings)


def _imported_package(b: Binding) -> str | None:
    """The top-level package an ``import`` binding brings in (None: not an absolute import)."""
    stmt = b.node
    if b.kind != "import" or not isinstance(b.value, ast.alias):
        return None
    if isinstance(stmt, ast.ImportFrom):
        return stmt.module.split(".")[0] if stmt.module and not stmt.level else None
    return b.value.name.split(".")[0]


def _may_be_class(func: ast.AST, partial: bool) -> bool:
    """A cheap test before evaluating a callee: classes are capitalised; a lower-case callee is
    followed only where the document makes a partial of a Fabric class."""
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    if not name:
        return False
    return name[0].isupper() or partial


def _is_fabric_callee(ev: Evaluator, v: object) -> bool:
    if isinstance(v, PartialVal):
        return any(fabric_args.is_fabric_class(ev, f) for f in v.funcs)
    return fabric_args.is_fabric_class(ev, v)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Problem:
    """What Lightning makes of one configuration the code can choose, when it is not what the
    code asked for: an ``error`` (construction or launch fails) or a configuration-changing
    ``warning`` (Lightning runs something else). ``scenario`` is the one whose message is shown
    (on the most capable machine the configuration can mean)."""

    scenario: Scenario
    error: lightning.ConnectorError | None = None
    warning: str | None = None
    at_launch: bool = False
    #: the error is about a file the code names by a relative path: it depends on the directory
    #: the job runs from, which the code does not say
    depends_on_cwd: bool = False


@dataclass(frozen=True)
class ConfigurationProblems:
    """The configurations of one Fabric: ``problems`` (one per failing or warned configuration),
    how many configurations there are, how many fail, and the unknown ones."""

    problems: tuple[Problem, ...]
    configurations: int
    failing: int
    unknown: tuple[Scenario, ...]
    #: configurations whose answer depends on a value assumed for an argument not known
    undecided: int = 0


def merged(judgements: list[ConfigurationProblems]) -> ConfigurationProblems:
    """The configurations of several constructions at one call (its alternatives) as one."""
    return ConfigurationProblems(
        tuple(p for j in judgements for p in j.problems),
        sum(j.configurations for j in judgements),
        sum(j.failing for j in judgements),
        tuple(s for j in judgements for s in j.unknown),
        sum(j.undecided for j in judgements),
    )


def configuration_problems(
    scenarios: list[Scenario],
    version: str = facts.LATEST_LIGHTNING,
    exists: Callable[[str], bool] | None = None,
    trainer: bool = False,
) -> ConfigurationProblems:
    """Group ``scenarios`` by the configuration the code writes (the machines it can mean and the
    values assumed for arguments not known are one configuration) and judge each group: a
    Fabric's (its release's errors and its launch's too), or a ``Trainer``'s (``trainer``: the
    errors of its ``__init__``, judged by :data:`facts.TRAINER_CONFIG_CHECKS`; a Trainer has no
    configuration-changing warning here)."""
    groups: dict[str, list[Scenario]] = {}
    unknown: list[Scenario] = []
    for s in scenarios:
        if not s.known:
            unknown.append(s)
            continue
        assert s.args is not None
        known = tuple((n, repr(getattr(s.args, n))) for n in CONNECTOR_ARGS if n not in s.assumed)
        groups.setdefault(repr((known, s.origins)), []).append(s)
    problems: list[Problem] = []
    failing = 0
    undecided = 0
    for group in groups.values():
        problem, decided = _judge_trainer(group) if trainer else _judge(group, version, exists)
        undecided += not decided
        if problem is not None:
            problems.append(problem)
            failing += problem.error is not None
    return ConfigurationProblems(tuple(problems), len(groups) + len(unknown), failing, tuple(unknown), undecided)


def _judge(group: list[Scenario], version: str, exists: Callable[[str], bool] | None) -> tuple[Problem | None, bool]:
    """One configuration on each machine it can mean (and each value assumed for what is not
    known): an error only where every one fails a check that reads no assumed argument. The
    second value is False when the answer depends on an assumed value."""
    if not _plain(group[0].args):
        return None, False
    missing = missing_config_file(group[0].args, exists) if exists is not None else None  # type: ignore[arg-type]
    if missing is not None:
        return Problem(group[-1], missing, depends_on_cwd=True), True
    results = [_error(s, version) for s in group]
    if all(e is not None for e, _ in results):
        error, at_launch = results[-1]  # the most capable machine (CUDA for "auto"): what the user meets
        assert error is not None
        if _reads_assumed(error.message, facts.CONFIG_CHECKS, group):
            return None, False
        return Problem(group[-1], error, at_launch=at_launch), True
    if any(e is not None for e, _ in results):
        # fails only on some machine (the code means the other one) or for some assumed value
        return None, not any(s.assumed for s in group)
    common = [w for w in group[0].outcome.warnings if all(w in s.outcome.warnings for s in group)]  # type: ignore[union-attr]
    if not common or _reads_assumed(common[0], facts.CONFIG_WARNINGS, group):
        return None, True
    return Problem(group[-1], warning=common[0]), True


def _judge_trainer(group: list[Scenario]) -> tuple[Problem | None, bool]:
    """One ``Trainer`` configuration on each machine it can mean: an error where ``__init__``
    fails on every one, by a check that reads no assumed argument and not the machine itself."""
    if not _plain(group[0].args):
        return None, False
    errors = [s.outcome.error if s.outcome is not None else None for s in group]
    error = errors[-1]  # the most capable machine's: what the user meets
    check = facts.config_check(error.message, facts.TRAINER_CONFIG_CHECKS) if error is not None else None
    if not all(errors) or error is None or check is None or check.machine:
        return None, not any(s.assumed for s in group)
    if _reads_assumed(error.message, facts.TRAINER_CONFIG_CHECKS, group):
        return None, False
    return Problem(group[-1], error), True


def _reads_assumed(message: str, table: tuple[facts.ConfigCheck, ...], group: list[Scenario]) -> bool:
    """Whether the check behind ``message`` reads an argument whose value was assumed."""
    check = facts.config_check(message, table)
    assumed = {n for s in group for n in s.assumed}
    if any(s.args is not None and _machine_count(s.args.devices) for s in group):
        assumed.add("devices")  # "auto"/-1: as many devices as the machine has, any number
    return check is None or bool(assumed.intersection(check.arguments))


def _machine_count(devices: object) -> bool:
    """Whether ``devices`` means "every device the machine has" (the count is the machine's)."""
    return devices in ("auto", -1, "-1")


def _plain(args: lightning.FabricArgs | None) -> bool:
    """Whether the arguments that take plain values have plain values (an object as ``devices``
    is the evaluator following a call it does not model, not what the code passes)."""
    return args is not None and not any(
        isinstance(getattr(args, name), lightning.Obj) for name in ("devices", "num_nodes", "precision")
    )


def _error(s: Scenario, version: str) -> tuple[lightning.ConnectorError | None, bool]:
    assert s.outcome is not None and s.args is not None
    if s.outcome.error is not None:
        check = facts.config_check(s.outcome.error.message)
        return (None, False) if check is not None and check.machine else (s.outcome.error, False)
    older = release_error(s.outcome, version)
    if older is not None:
        return older, False
    error = launch_error(s.args, s.outcome)
    return error, error is not None


def workspace_file_exists(document: str | None, root: str | None) -> Callable[[str], bool] | None:
    """Whether a relative path names a file from the document's folder or one of its parents up
    to the workspace root (where a job is usually started); None when the document has no path."""
    if document is None:
        return None
    folder = os.path.dirname(os.path.abspath(document))
    stop = os.path.abspath(root) if root else folder
    folders = [folder]
    while folder != stop and os.path.dirname(folder) != folder and folder.startswith(stop):
        folder = os.path.dirname(folder)
        folders.append(folder)
    return lambda path: any(os.path.isfile(os.path.join(f, path)) for f in folders)
