"""FAB010: a batch-job script (SLURM, ``torchrun``, ``fabric run``) that disagrees with the
``Fabric(...)`` of the script it launches."""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass

from fabric_lsp import facts
from fabric_lsp.engine.findings import (
    Certainty,
    Explanation,
    Finding,
    Located,
    Related,
    Span,
    Verdict,
    resolve_severity,
)
from fabric_lsp.engine.lightning import connector as lightning
from fabric_lsp.engine.lightning.configurations import Scenario
from fabric_lsp.engine.lightning.launch_checks import cluster_settings_error
from fabric_lsp.engine.program.batch_scripts import BatchScript, Launch, LaunchEnvironment, ScriptOption, environment
from fabric_lsp.engine.python.values import FabricInst
from fabric_lsp.engine.rule import Rule, RuleContext
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.rules.fab010.docs import DOC, INVALID, SUMMARY, VALID
from fabric_lsp.rules.prefilters import PREFILTERS

LIGHTNING = "lightning/fabric/"
#: the arguments whose values the script's settings are compared with
COMPARED = ("devices", "num_nodes")
CLI_CONFLICT = re.compile(r"Your code has `Fabric\((\w+)=")


@dataclass(frozen=True)
class _Problem:
    """What goes wrong in one configuration under one launch."""

    kind: str  # "construction", "launch" or "hang"
    scenario: Scenario
    script: BatchScript
    launch: Launch
    env: LaunchEnvironment
    message: str  # Lightning's message (or, for "hang", what happens)
    where: str  # the place in Lightning
    argument: str | None  # the Fabric argument the problem is about
    option: ScriptOption | None  # the script's option it is compared with


@dataclass(frozen=True)
class _Judgement:
    problem: _Problem
    certain: bool


class FAB010(Rule):
    code = "FAB010"
    name = "batch-script-mismatch"
    summary = SUMMARY
    doc = DOC
    valid = VALID
    invalid = INVALID
    prefilter = PREFILTERS["FAB010"]

    def sites(self, model: SemanticModel) -> list[ast.AST]:
        if not model.batch_launches():
            return []
        return list(model.fabric_constructions())

    def verdict(self, model: SemanticModel, call: ast.AST, ctx: RuleContext) -> Verdict | None:
        assert isinstance(call, ast.Call)
        here = model.span(call)
        fabrics = [
            v
            for v in model.values(call)
            if isinstance(v, FabricInst) and v.origin is not None and v.origin.span == here
        ]
        if not fabrics:
            return None
        # configurations that fail wherever they run are FAB008's (and a CPU-only failure of an
        # ``"auto"`` accelerator means the code is meant for the other machine)
        scenarios = [s for f in fabrics for s in model.scenarios(f) if s.outcome is None or s.outcome.error is None]
        judgement = _first_judgement(scenarios, model.batch_launches())
        if judgement is None:
            return None
        finding = self._finding(model, call, judgement)
        return Verdict(self.code, here, finding, _explain(fabrics[0], judgement, finding))

    def _finding(self, model: SemanticModel, call: ast.Call, judgement: _Judgement) -> Finding:
        problem = judgement.problem
        certainty = Certainty.CERTAIN if judgement.certain else Certainty.POSSIBLE
        span, origin_related = _place(model, call, problem)
        return Finding(
            code=self.code,
            severity=resolve_severity(certainty),
            message=_message(model, problem, judgement.certain),
            span=span,
            related=(*_script_related(model, problem), *origin_related),
            url=self.url,
            certainty=certainty,
            lightning=f"{LIGHTNING}{problem.where}",
        )


# -- judging ------------------------------------------------------------------------------------
#: the arguments a problem's answer depends on, per kind: a problem counts only where they are
#: known literals (a command-line or config value, even with a default, may be what the script
#: passes). The launch checks and the hang depend on the launcher and the process count.
_PROCESS_ARGUMENTS = ("devices", "num_nodes", "strategy", "accelerator")
_NTASKS_ARGUMENTS = ("plugins",)  # a cluster-environment plugin replaces SLURM's detection


def _depends(problem: _Problem) -> tuple[str, ...]:
    if problem.kind == "construction":
        return (problem.argument,) if problem.argument else _NTASKS_ARGUMENTS
    return _PROCESS_ARGUMENTS


def _counts(problem: _Problem, open_arguments: set[str]) -> bool:
    """Whether ``problem`` holds whatever the code's unknown values are: its arguments are known
    in every configuration, written as literals, and not ``"auto"``/``-1`` devices (how many
    devices a node has is not in the code)."""
    depends = _depends(problem)
    if open_arguments & set(depends):
        return False
    scenario = problem.scenario
    for name in set(depends) & set(COMPARED):
        label = scenario.label(name)
        if label is not None and not label.startswith(f"{name}="):
            return False
    devices = scenario.args.devices if scenario.args is not None else None
    return not ("devices" in depends and devices in ("auto", -1, "-1") and scenario.origin("devices") is not None)


def _first_judgement(scenarios: list[Scenario], launches: list[tuple[BatchScript, Launch]]) -> _Judgement | None:
    """The first launch under which a configuration fails: an error that every configuration
    meets first, else a warning."""
    found: list[_Judgement] = []
    open_arguments = {name for s in scenarios for name in s.assumed}
    if any(not s.known for s in scenarios):
        open_arguments.update(_PROCESS_ARGUMENTS)
    for script, launch in launches:
        env = environment(script, launch)
        problems = [_problem(s, script, launch, env) if s.known else None for s in scenarios]
        counted = [p if p is not None and _counts(p, open_arguments) else None for p in problems]
        failing = [p for p in counted if p is not None]
        if not failing:
            continue
        first = next((p for p in failing if p.kind != "hang"), failing[0])
        certain = first.kind != "hang" and all(p is not None and p.kind != "hang" for p in counted)
        found.append(_Judgement(first, certain))
    return next((j for j in found if j.certain), found[0] if found else None)


def _problem(scenario: Scenario, script: BatchScript, launch: Launch, env: LaunchEnvironment) -> _Problem | None:
    assert scenario.args is not None and scenario.outcome is not None
    variables = env.mapping()
    outcome = lightning.resolve(scenario.args, scenario.outcome.host, variables)
    if outcome.error is not None:
        return _construction_problem(scenario, script, launch, env, outcome.error)
    settings = cluster_settings_error(outcome, variables)
    if settings is not None:
        error, variable, where = settings
        argument = "num_nodes" if variable == "SLURM_NNODES" else "devices"
        message = f"{error.type}: {error.message}"
        return _Problem("launch", scenario, script, launch, env, message, where, argument, env.source(variable))
    return _hang(scenario, script, launch, env, outcome)


def _construction_problem(
    scenario: Scenario, script: BatchScript, launch: Launch, env: LaunchEnvironment, error: lightning.ConnectorError
) -> _Problem | None:
    """The construction errors the script causes: the ``fabric run`` conflict and SLURM's
    ``--ntasks`` check. Others (an accelerator the assumed machine lacks) are not the script's."""
    message = f"{error.type}: {error.message}"
    conflict = CLI_CONFLICT.match(error.message)
    if conflict is not None:
        argument = conflict.group(1)
        variable = "LT_" + argument.upper()
        return _Problem(
            "construction",
            scenario,
            script,
            launch,
            env,
            message,
            facts.CLI_CONFLICT_CHECK,
            argument,
            env.source(variable),
        )
    if not error.message.startswith(facts.SLURM_NTASKS_MESSAGE_START):
        return None
    return _Problem(
        "construction",
        scenario,
        script,
        launch,
        env,
        message,
        facts.SLURM_NTASKS_CHECK,
        None,
        env.source(facts.SLURM_VARIABLE),
    )


def _hang(
    scenario: Scenario, script: BatchScript, launch: Launch, env: LaunchEnvironment, outcome: lightning.Outcome
) -> _Problem | None:
    """A SLURM job that starts ``python`` without ``srun``: one process where the job asked for
    several tasks, or one node where it asked for several."""
    if not script.slurm or launch.srun or launch.runner != "python" or outcome.cluster_environment is None:
        return None
    variables = env.mapping()
    tasks = int(variables.get(facts.SLURM_VARIABLE, "1"))
    nodes = script.slurm_option(launch, "nodes")
    many_nodes = nodes is not None and nodes.value.isdigit() and int(nodes.value) > 1 and outcome.num_nodes > 1
    if env.cluster == "SLURM" and tasks > 1:
        what = (
            f"the job asks for {tasks} tasks, so Lightning takes the world size from SLURM (`SLURM_NTASKS={tasks}`)"
            " and creates no processes itself: the one process the script starts waits for ranks nobody starts"
            " (Lightning does not warn: it sees `SLURM_NTASKS` and takes `srun` for used)"
        )
        source = env.source(facts.SLURM_VARIABLE)
        return _Problem("hang", scenario, script, launch, env, what, facts.SLURM_WORLD_SIZE, None, source)
    if many_nodes and nodes is not None:
        what = (
            f"the job asks for {nodes.value} nodes (`num_nodes={outcome.num_nodes}`), but only the first node runs"
            " the script: its processes wait for the other nodes' ranks (Lightning only warns that `srun` is not"
            " used)"
        )
        return _Problem("hang", scenario, script, launch, env, what, facts.SLURM_SRUN_WARNING, "num_nodes", nodes)
    return None


# -- where and what -----------------------------------------------------------------------------
def _place(model: SemanticModel, call: ast.Call, problem: _Problem) -> tuple[Span, tuple[Related, ...]]:
    """The argument's value in the call when it is written there, else the call (the value's own
    place, when elsewhere, goes to related information)."""
    call_span = model.span(call)
    name = problem.argument
    if name is None:
        return call_span, ()
    origin = problem.scenario.origin(name)
    if origin is not None and origin.path == model.path and _inside(origin.span, call_span):
        return origin.span, ()
    keyword = next((k for k in call.keywords if k.arg == name), None)
    span = model.span(keyword.value) if keyword is not None else call_span
    if origin is None:
        return span, ()
    path = origin.path if origin.path != model.path else None
    return span, (Related(f"`{name}` written here", origin.span, path),)


def _inside(inner: Span, outer: Span) -> bool:
    return outer.start <= inner.start and inner.end <= outer.end


def _shown(model: SemanticModel, path: str) -> str:
    root = model.workspace.root
    if root:
        try:
            relative = os.path.relpath(path, root)
        except ValueError:
            relative = path
        if not relative.startswith(".."):
            return relative.replace(os.sep, "/")
    return os.path.basename(path)


def _written(problem: _Problem) -> str:
    name, args = problem.argument, problem.scenario.args
    if name is None or args is None:
        return "`Fabric(...)`"
    return f"`{name}={getattr(args, name)!r}`"


def _option_text(problem: _Problem) -> str:
    option = problem.option
    return f"`{option.text}`" if option is not None else f"`{problem.launch.text}`"


def _message(model: SemanticModel, problem: _Problem, certain: bool) -> str:
    script = _shown(model, problem.script.path)
    if problem.kind == "hang":
        return (
            f"`{script}` starts `{problem.launch.text}` without `srun`: {problem.message}. The job hangs until it is"
            f" killed. Prepend `srun` to the command in `{script}`."
        )
    when = "when `Fabric(...)` is constructed" if problem.kind == "construction" else "at `fabric.launch()`"
    possible = "" if certain else f" for a configuration this code can choose ({problem.scenario.describe()})"
    lightning_says = _sentence(problem.message)
    if problem.argument is None:  # --ntasks without --ntasks-per-node: the script's own setting
        return (
            f"`{script}` requests {_option_text(problem)} without `--ntasks-per-node`: under SLURM Lightning raises"
            f" {when}{possible}: {lightning_says} Use `--ntasks-per-node` (with `--nodes`) in `{script}` instead."
            " No automatic fix: the script, not the code, has to change."
        )
    option = problem.option.text if problem.option is not None else problem.launch.text
    return (
        f"{_written(problem)} disagrees with {_option_text(problem)} in `{script}`: when the job runs, Lightning"
        f" raises {when}{possible}: {lightning_says} Change `{problem.argument}` or `{option}` so that they agree."
        " No automatic fix: which side is right is the job's choice."
    )


def _sentence(text: str) -> str:
    return text if text.rstrip().endswith((".", "!", "?")) else text + "."


def _script_related(model: SemanticModel, problem: _Problem) -> tuple[Related, ...]:
    script = problem.script
    out = []
    if problem.option is not None and problem.option.line != problem.launch.line:
        out.append(Related(f"set here: `{problem.option.text}`", script.line_span(problem.option.line), script.path))
    out.append(Related(f"launched here: `{problem.launch.text}`", script.line_span(problem.launch.line), script.path))
    return tuple(out)


# -- hover --------------------------------------------------------------------------------------
def _explain(fabric: FabricInst, judgement: _Judgement, finding: Finding) -> Explanation:
    problem = judgement.problem
    items = [
        Located(
            f"Launched by `{problem.launch.text}`", problem.script.line_span(problem.launch.line), problem.script.path
        ),
        Located(f"Configuration: {problem.scenario.describe()}"),
    ]
    if problem.env.env:
        shown = ", ".join(f"{k}={v}" for k, v in problem.env.env if not k.startswith(("LOCAL_RANK", "RANK")))
        items.append(Located(f"The script gives the process: {shown}"))
    items.append(Located(f"Lightning 2.6.6 checks it at `{finding.lightning}`"))
    items.append(Located(finding.message))
    how = "certainly" if finding.certainty is Certainty.CERTAIN else "possibly"
    what = "hangs on the cluster" if problem.kind == "hang" else "fails on the cluster"
    headline = f"**FAB010** — this `{fabric.class_name}(...)` {how} {what} (batch script `{os.path.basename(problem.script.path)}`)"
    steps = tuple(Located(o.text, o.span, o.path) for o in fabric.via)
    return Explanation(headline, tuple(items), steps)
