"""FAB007: ``launch()`` misuse — no function for a spawning launcher, ``launch(main())``, a function
that cannot take the Fabric, and a missing or late ``launch()``."""

from __future__ import annotations

import ast
import os

from fabric_lsp import facts
from fabric_lsp.engine.findings import (
    Applicability,
    Certainty,
    Edit,
    Explanation,
    Finding,
    Fix,
    Located,
    Related,
    Verdict,
    resolve_severity,
)
from fabric_lsp.engine.lightning.connector import Outcome
from fabric_lsp.engine.program.launch import Around
from fabric_lsp.engine.python.values import FabricInst, FuncRef, Unknown
from fabric_lsp.engine.rule import Rule, RuleContext
from fabric_lsp.engine.semantic.certainty import Judgement, by_outcome, judge_fabrics
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.facts import Kind
from fabric_lsp.rules.fab007.docs import DOC, INVALID, SUMMARY, VALID
from fabric_lsp.rules.fab007.signature import Params, params, returns_none
from fabric_lsp.rules.prefilters import PREFILTERS
from fabric_lsp.rules.scenario_text import process_related

NOT_LAUNCHED = "To use Fabric with more than one device, you must call `.launch()` or use the CLI: `fabric run --help`."


def _needs_function(outcome: Outcome) -> bool:
    return outcome.launcher is not None and outcome.launcher.value in facts.FUNCTION_LAUNCHERS


def _may_spawn(kind: Kind | None) -> bool:
    """Whether a strategy of this kind may have a launcher that needs a function (``ddp_spawn``,
    ``ddp_fork``, ``xla`` … or a strategy not known statically)."""
    return kind is None or kind in facts.SPAWNING_KINDS


def _requires_launch(outcome: Outcome) -> bool:
    return outcome.kind is not None and outcome.kind not in facts.LAUNCH_EXEMPT_KINDS


def _requires_launch_on_one_process(outcome: Outcome) -> bool:
    return _requires_launch(outcome) and outcome.world_size == 1


def _strategies(judgement: Judgement) -> str:
    names = dict.fromkeys(f"`{s.outcome.strategy}`" for s in judgement.failing if s.outcome is not None)
    return " or ".join(names)


def _function_arg(call: ast.Call) -> ast.expr | None:
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    return next((kw.value for kw in call.keywords if kw.arg == "function"), None)


class FAB007(Rule):
    code = "FAB007"
    name = "launch-misuse"
    summary = SUMMARY
    doc = DOC
    valid = VALID
    invalid = INVALID
    fixable = True
    #: method calls only (``.setup(``), so that the scan starts at each ``.``
    prefilter = PREFILTERS["FAB007"]

    def sites(self, model: SemanticModel) -> list[ast.AST]:
        calls: list[ast.Call] = [c for m in ("launch", *facts.NEEDS_LAUNCH) for c in model.method_calls(m)]
        calls.sort(key=lambda c: (c.lineno, c.col_offset))
        return list(calls)

    def verdict(self, model: SemanticModel, call: ast.AST, ctx: RuleContext) -> Verdict | None:
        assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
        fabrics, unknown = model.receiver_fabrics(call, by_type=ctx.report_unknown)
        if not fabrics:
            return self._by_type(model, call) if unknown and not ctx.report_unknown else None
        if call.func.attr == "launch":
            return self._launch(model, call, fabrics, len(unknown))
        return self._needs_launch(model, call, fabrics, len(unknown))

    def _by_type(self, model: SemanticModel, call: ast.Call) -> Verdict | None:
        """The verdict on a call whose receiver the evaluator does not know, where no hint is
        wanted: a Fabric known only by its type (jedi) fails the checks of the function handed to
        ``launch`` on every configuration (they read the function, not the Fabric), and gives a
        hint at most on the others — so jedi is asked only once such a check fails."""
        fn = _function_arg(call) if call.func.attr == "launch" else None  # type: ignore[attr-defined]
        if fn is None:
            return None
        verdict = self._called_function(model, call, fn) if isinstance(fn, ast.Call) else self._arity(model, call, fn)
        return verdict if verdict is not None and model.receiver_fabrics(call)[0] else None

    # -- launch(...) itself --------------------------------------------------------------------
    def _launch(self, model: SemanticModel, call: ast.Call, fabrics: list[FabricInst], unknown: int) -> Verdict | None:
        fn = _function_arg(call)
        if fn is None:
            if not any(_may_spawn(c.kind) for f in fabrics for c in f.choices):
                return None  # no strategy this code can choose spawns (checked before the costlier scenarios)
            judgement = judge_fabrics(model, fabrics, unknown, by_outcome(_needs_function))
            if judgement.failure is None:
                return None
            rcv = model.segment(call.func.value)  # type: ignore[attr-defined]
            message = (
                f"`{rcv}.launch()` needs a function under {_strategies(judgement)}: the processes are spawned and "
                "run only that function. Lightning raises TypeError: To spawn processes with the strategy, `.launch()` "
                f"needs to be called with a function that contains the code to launch in processes. Move the code "
                f"after `launch()` into `def main({rcv}): ...` and call `{rcv}.launch(main)`."
            )
            return self._verdict(
                model,
                call,
                judgement.failure,
                message,
                _scenario_related(model, judgement, fabrics),
                judgement=judgement,
            )
        if isinstance(fn, ast.Call):
            return self._called_function(model, call, fn)
        return self._arity(model, call, fn)

    def _called_function(self, model: SemanticModel, call: ast.Call, fn: ast.Call) -> Verdict | None:
        callees = model.values(fn.func)
        if not callees or not all(returns_none(v) for v in callees):
            return None
        name = model.segment(fn.func)
        passes_fabric, rest = _passed_on(model, call, fn)
        pass_fn = f"launch({', '.join([name, *rest])})"
        message = (
            f"`launch({model.segment(fn)})` calls `{name}` now, before `launch()`, in this one process (where a "
            "strategy needs a launch, its first setup call raises `To use Fabric with more than one device, you must "
            "call `.launch()``), then hands its result (None) to `launch`, which raises TypeError: "
            f"`Fabric.launch(...)` needs to be a callable. "
        )
        if passes_fabric or not rest:
            message += f"Pass the function{' and its other arguments' if rest else ''}: `{pass_fn}`."
        else:
            message += (
                f"`{name}` is not given the Fabric here, and `launch` passes it first: add a first parameter for it, "
                f"then call `{pass_fn}`."
            )
        fix = self._fix_called(model, call, fn, callees, passes_fabric, rest)
        if fix is None and (passes_fabric or not rest):
            message += f" No automatic fix: `{name}` does not take exactly {'these' if rest else 'the Fabric'}."
        related = tuple(_def_related(model, v, f"`{name}` defined here") for v in callees if isinstance(v, FuncRef))
        return self._verdict(model, call, Certainty.CERTAIN, message, related, fix)

    def _fix_called(
        self, model: SemanticModel, call: ast.Call, fn: ast.Call, callees: list, passes_fabric: bool, rest: list[str]
    ) -> Fix | None:
        """``launch(main())``/``launch(main(fabric))`` → ``launch(main)`` (safe: ``launch`` calls it
        with the Fabric); ``launch(main(fabric, cfg))`` → ``launch(main, cfg)``: unsafe, since a
        spawning launcher then pickles ``cfg`` for each process."""
        sigs = [params(v) for v in callees]
        if (
            len(sigs) != 1
            or sigs[0] is None
            or not (passes_fabric or not fn.args)
            or len(call.args) + len(call.keywords) != 1
        ):
            return None
        name = model.segment(fn.func)
        if not rest:
            if sigs[0].total != 1 or sigs[0].positional != 1:
                return None
            return Fix(f"Pass the function: launch({name})", Applicability.SAFE, (Edit(model.span(fn), name),))
        if not passes_fabric or any(isinstance(a, ast.Starred) for a in fn.args):
            return None
        if any(k.arg in (None, "function") for k in fn.keywords):
            return None
        if _arity_problem(sigs[0], len(fn.args), bool(fn.keywords)) is not None:
            return None
        text = ", ".join([name, *rest])
        return Fix(
            f"Pass the function and its arguments: launch({text})", Applicability.UNSAFE, (Edit(model.span(fn), text),)
        )

    def _arity(self, model: SemanticModel, call: ast.Call, fn: ast.expr) -> Verdict | None:
        values = model.values(fn)
        sigs = [params(v) for v in values]
        if not sigs or any(s is None for s in sigs) or any(isinstance(v, Unknown) for v in values):
            return None
        extra = call.args[1:] if call.args and call.args[0] is fn else call.args
        if any(isinstance(a, ast.Starred) for a in extra) or any(kw.arg is None for kw in call.keywords):
            return None
        given = 1 + len(extra)
        keywords = any(kw.arg != "function" for kw in call.keywords)
        problems = [_arity_problem(s, given, keywords) for s in sigs if s is not None]
        if not all(problems):
            return None
        related = tuple(_def_related(model, v, "defined here") for v in values if isinstance(v, FuncRef))
        return self._verdict(model, call, Certainty.CERTAIN, str(problems[0]), related)

    # -- calls that need a launched Fabric -----------------------------------------------------
    def _needs_launch(
        self, model: SemanticModel, call: ast.Call, fabrics: list[FabricInst], unknown: int
    ) -> Verdict | None:
        around = model.launch_around(call)
        if (around.before is not None and around.only_if is None) or model.in_overridden_run(call):
            return None
        mine = [f for f in fabrics if model.first_needing_launch(f) is call]
        if not mine:
            return None
        if around.only_if is not None:
            return self._launched_on_several_only(model, call, mine, unknown, around)
        late = around.later
        judgement = None
        if late is None:
            # A lone Fabric is judged first: one that no configuration needs launched is not looked
            # for among every module's launch calls. (With several, leaving some out can change
            # how the others' scenarios group, so the search comes first: ``certainty.judge``.)
            if len(mine) == 1:
                judgement = judge_fabrics(model, mine, unknown, by_outcome(_requires_launch))
                if judgement.failure is None:
                    return None
            mine = [f for f in mine if _never_launched(model, f)]
            if not mine:
                return None
        if judgement is None:
            judgement = judge_fabrics(model, mine, unknown, by_outcome(_requires_launch))
        certainty = judgement.failure
        if certainty is None:
            return None
        rcv, method = model.segment(call.func.value), call.func.attr  # type: ignore[attr-defined]
        related = _scenario_related(model, judgement, mine)
        head = f"`{rcv}.{method}(...)` needs a launched Fabric under {_strategies(judgement)}"
        if late is not None:
            fn = _function_arg(late)
            first = (
                f"`{rcv}.launch()` first" if fn is None else f"it in the function `launch` runs (`{model.segment(fn)}`)"
            )
            message = (
                f"{head}, and `{rcv}.launch()` comes only later: Lightning raises RuntimeError: {NOT_LAUNCHED} "
                f"Call {first}."
            )
            related = (Related("launch() called only here", model.span(late)), *related)
            return self._verdict(model, call, certainty, message, related, judgement=judgement)
        message = (
            f"{head}, and this Fabric is never launched: run as `python script.py` or under `torchrun`, "
            "Lightning raises "
            f"RuntimeError: {NOT_LAUNCHED} Call `{rcv}.launch()` after creating the Fabric."
        )
        evidence = model.cli_evidence()
        runs_this = evidence is not None and (
            evidence.path is None or os.path.basename(model.path or "") in evidence.scripts
        )
        if runs_this and not any(s.outcome is not None and s.outcome.host.tpu for s in judgement.failing):
            # the script itself, or a command of the repository, runs it under `fabric run`,
            # which launches it — on every configuration the CLI can run (not TPUs: cli.py:205)
            return None
        if evidence is not None:
            where = os.path.basename(evidence.path or "")
            message += (
                f" ({where} mentions the Fabric CLI, `{evidence.text}`: under `fabric run` with matching options "
                "the script needs no `launch()`.)"
            )
            certainty = Certainty.POSSIBLE
        return self._verdict(model, call, certainty, message, related, judgement=judgement)

    def _launched_on_several_only(
        self, model: SemanticModel, call: ast.Call, fabrics: list[FabricInst], unknown: int, around: Around
    ) -> Verdict | None:
        """``if fabric.world_size > 1: fabric.launch()`` (or a count of the machine's devices):
        with one process the launch does not run, and every strategy but the exempt ones fails
        ``_validate_launched`` all the same (fabric.py:1193-1197)."""
        judgement = judge_fabrics(model, fabrics, unknown, by_outcome(_requires_launch_on_one_process))
        certainty = judgement.failure
        if certainty is None:
            return None
        if not around.own_world_size:  # the machine's device count, or a value not tied to this Fabric
            certainty = Certainty.POSSIBLE
        assert around.before is not None and around.only_if is not None
        rcv, method = model.segment(call.func.value), call.func.attr  # type: ignore[attr-defined]
        test = model.segment(around.only_if)
        message = (
            f"`{rcv}.{method}(...)` needs a launched Fabric under {_strategies(judgement)} on one device too, but "
            f"`{rcv}.launch()` runs only if `{test}`: with one process Lightning raises RuntimeError: {NOT_LAUNCHED} "
            f"Call `{rcv}.launch()` whatever the device count (with one device it starts no other process)."
        )
        related = (
            Related(f"launch() called only if `{test}`", model.span(around.before)),
            *_scenario_related(model, judgement, fabrics),
        )
        return self._verdict(model, call, certainty, message, related, judgement=judgement)

    def _verdict(
        self,
        model: SemanticModel,
        call: ast.Call,
        certainty: Certainty,
        message: str,
        related: tuple[Related, ...],
        fix: Fix | None = None,
        judgement: Judgement | None = None,
    ) -> Verdict:
        finding = Finding(
            code=self.code,
            severity=resolve_severity(certainty),
            message=message,
            span=model.span(call),
            related=related,
            fix=fix,
            url=self.url,
            certainty=certainty,
        )
        items = [Located(r.message, r.span, r.path) for r in related]
        if judgement is not None:
            items += [
                Located(f"{s.outcome.strategy} ({_launcher(s.outcome)} launcher) — {s.describe()}")
                for s in judgement.failing[:4]
                if s.outcome
            ]
            items += [
                Located(f"not affected: {s.outcome.strategy} — {s.describe()}")
                for s in judgement.passing[:2]
                if s.outcome
            ]
            items += [Located(f"not known statically: {s.describe()}") for s in judgement.unknown[:2]]
        how = "certainly" if certainty is Certainty.CERTAIN else "possibly"
        explanation = Explanation(f"**FAB007** — {how} raises: {message.split(':')[0]}", tuple(items))
        return Verdict(self.code, model.span(call), finding, explanation)


def _launcher(outcome: Outcome) -> str:
    return outcome.launcher.value if outcome.launcher else "no"


def _never_launched(model: SemanticModel, fabric: FabricInst) -> bool:
    if fabric.args is None:
        return False
    return not model.may_be_launched(fabric)


def _arity_problem(sig: Params, given: int, keywords: bool) -> str | None:
    if sig.total == 0:
        return (
            f"`{sig.name}` takes no parameter, but `launch` passes the Fabric as its first argument: Lightning raises "
            f"TypeError: `Fabric.launch(function=...)` needs to take at least one argument. Add a parameter: "
            f"`def {sig.name}(fabric): ...`."
        )
    if not sig.star and sig.positional < given:
        return (
            f"`launch` calls `{sig.name}` with the Fabric and {given - 1} more argument(s), "
            f"but it takes {sig.positional} "
            f"positional parameter(s): TypeError in every process. Make the Fabric its first parameter."
        )
    if sig.required > given and not keywords:
        return (
            f"`{sig.name}` needs {sig.required} positional arguments but `launch` passes {given}: "
            "TypeError in every process."
        )
    return None


def _passed_on(model: SemanticModel, call: ast.Call, fn: ast.Call) -> tuple[bool, list[str]]:
    """For ``launch(main(fabric, cfg, steps=2))``: whether ``main`` is given the receiver first,
    and the text of its other arguments (``["cfg", "steps=2"]``), which ``launch`` would pass on."""
    receiver = ast.dump(call.func.value)  # type: ignore[attr-defined]
    passes_fabric = bool(fn.args) and ast.dump(fn.args[0]) == receiver
    args = fn.args[1:] if passes_fabric else fn.args
    rest = [model.segment(a) for a in args]
    rest += [f"{k.arg}={model.segment(k.value)}" if k.arg else f"**{model.segment(k.value)}" for k in fn.keywords]
    return passes_fabric, rest


def _def_related(model: SemanticModel, value: FuncRef, text: str) -> Related:
    path = value.module.path if value.module.path != model.path else None
    node = value.node
    return Related(text, value.module.span(node), path)


def _scenario_related(model: SemanticModel, judgement: Judgement, fabrics: list[FabricInst]) -> tuple[Related, ...]:
    return tuple(process_related(model, judgement.failing, fabrics))
