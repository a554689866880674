"""FAB008: a ``Fabric(...)`` configuration Lightning rejects before anything runs."""

from __future__ import annotations

import ast
import difflib
import re
from typing import Any

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
from fabric_lsp.engine.program.constructions import ConfigurationProblems, Problem, merged
from fabric_lsp.engine.python.values import FabricInst
from fabric_lsp.engine.rule import Rule, RuleContext
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.rules.configuration_place import Place, place_of
from fabric_lsp.rules.fab008.docs import DOC, INVALID, SUMMARY, VALID
from fabric_lsp.rules.prefilters import PREFILTERS

LIGHTNING = "lightning/fabric/"


class FAB008(Rule):
    code = "FAB008"
    name = "impossible-configuration"
    summary = SUMMARY
    doc = DOC
    valid = VALID
    invalid = INVALID
    fixable = True
    prefilter = PREFILTERS["FAB008"]

    def sites(self, model: SemanticModel) -> list[ast.AST]:
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
        judgements = [model.configuration_problems(f, ctx.lightning_version) for f in fabrics]
        total = merged(judgements)
        problem = next((p for p in total.problems if p.error is not None), None) or next(iter(total.problems), None)
        if problem is None:
            return None  # no verdict: hover on the call stays with the rules that have something to say
        finding = self._finding(model, call, fabrics[0], total, problem)
        return Verdict(self.code, here, finding, _explain(fabrics[0], problem, finding))

    def _finding(
        self, model: SemanticModel, call: ast.Call, fabric: FabricInst, total: ConfigurationProblems, problem: Problem
    ) -> Finding:
        message_text = problem.error.message if problem.error is not None else problem.warning or ""
        table = facts.CONFIG_CHECKS if problem.error is not None else facts.CONFIG_WARNINGS
        check = facts.config_check(message_text, table)
        place = place_of(model, call, problem.scenario, check.arguments if check else ())
        certain = (
            problem.error is not None
            and not problem.depends_on_cwd
            and total.failing == total.configurations
            and not total.unknown
        )
        certainty = Certainty.CERTAIN if certain else Certainty.POSSIBLE
        fix, why_not = _fix(model, total, problem, place)
        message = _message(model, call, problem, place, certain) + _suggestion(problem, place)
        if why_not:
            message += f" No automatic fix: {why_not}."
        return Finding(
            code=self.code,
            severity=resolve_severity(certainty),
            message=message,
            span=place.span,
            related=_related(model, fabric, place),
            fix=fix,
            url=self.url,
            certainty=certainty,
            lightning=f"{LIGHTNING}{check.where}" if check else "",
        )


# -- what -------------------------------------------------------------------------------------------
def _written(problem: Problem, argument: str | None) -> str:
    args = problem.scenario.args
    if argument is None or args is None:
        return "`Fabric(...)`"
    value = getattr(args, argument)
    shown = f"{value.cls}(...)" if hasattr(value, "cls") else repr(value)
    return f"`{argument}={shown}`"


def _message(model: SemanticModel, call: ast.Call, problem: Problem, place: Place, certain: bool) -> str:
    written = _written(problem, place.argument)
    if problem.error is None:
        return (
            f"{written}: Lightning runs a different configuration than the code asks for (it warns: {problem.warning})"
        )
    when = "when the processes start (`launch()`)" if problem.at_launch else "when `Fabric(...)` is constructed"
    lightning = f"{problem.error.type}: {problem.error.message}"
    if problem.depends_on_cwd:
        return (
            f"{written} names a config file that is not in the workspace (looked up from this file's folder to the"
            f" workspace root): the strategy's constructor raises unless the job runs where the file exists:"
            f" {_sentence(lightning)}"
        )
    if certain:
        return f"{written} is a configuration Lightning rejects {when}: {_sentence(lightning)}"
    return (
        f"{written} fails {when} for a configuration this code can choose "
        f"({problem.scenario.describe()}): {_sentence(lightning)}"
    )


def _sentence(text: str) -> str:
    return text if text.rstrip().endswith((".", "!", "?")) else text + "."


_NAME_CANDIDATES = {
    "strategy": tuple(facts.STRATEGY_REGISTRY),
    "accelerator": (*facts.ACCELERATOR_EXTRA_NAMES, *facts.ACCELERATOR_REGISTRY),
    "precision": tuple(p for p in facts.PRECISION_INPUTS if isinstance(p, str) and p not in facts.PRECISION_ALIASES),
}
#: a precision value that names 8 bits (``"8-mixed"``, ``"fp8"``; not ``"128"``)
_EIGHT_BITS = re.compile(r"(?<![0-9])8(?![0-9])")
_INVALID_NAME = re.compile(r"(You selected an invalid (strategy|accelerator) name|Precision .* is invalid)")


def _suggestion(problem: Problem, place: Place) -> str:
    """``did you mean`` for a name Lightning does not know (a suggestion: never a fix)."""
    if problem.error is None or not _INVALID_NAME.match(problem.error.message) or place.argument is None:
        return ""
    value = getattr(problem.scenario.args, place.argument, None)
    if not isinstance(value, str):
        return ""
    if place.argument == "precision" and _EIGHT_BITS.search(value):
        return f" Did you mean `precision={facts.FP8_PRECISION!r}` (FP8 through NVIDIA Transformer Engine)?"
    close = difflib.get_close_matches(value.lower(), _NAME_CANDIDATES.get(place.argument, ()), n=1, cutoff=0.6)
    if not close:
        return ""
    return f" Did you mean `{place.argument}={close[0]!r}`?"


# -- fix --------------------------------------------------------------------------------------------
def _precision_target(problem: Problem) -> str | None:
    """What Lightning itself turns the written precision into (``connector.py:571``/``:483``)."""
    if problem.warning is None or problem.scenario.args is None or problem.scenario.outcome is None:
        return None
    check = facts.config_check(problem.warning, facts.CONFIG_WARNINGS)
    if check is None or check.arguments[0] != "precision":
        return None
    return str(problem.scenario.outcome.precision)


def _fix(model: SemanticModel, total: ConfigurationProblems, problem: Problem, place: Place) -> tuple[Fix | None, str]:
    target = _precision_target(problem)
    if target is None:
        return None, ""
    node = place.node
    if node is None or not isinstance(node.value, (str, int)) or isinstance(node.value, bool):
        return None, "the precision is not written as a literal in this call"
    targets = {_precision_target(p) for p in total.problems}
    if total.unknown or total.failing or len(total.problems) != total.configurations or len(targets) != 1:
        return None, "the configurations this code can choose do not all become the same precision"
    quote = "'" if model.segment(node).startswith("'") else '"'
    new = f"{quote}{target}{quote}"
    return Fix(f"Replace with {new} (what Lightning uses)", Applicability.SAFE, (Edit(place.span, new),)), ""


# -- related, hover ---------------------------------------------------------------------------------
def _related(model: SemanticModel, fabric: FabricInst, place: Place) -> tuple[Related, ...]:
    out: list[Related] = []
    if place.origin is not None and place.argument is not None:
        path = place.origin.path if place.origin.path != model.path else None
        out.append(Related(f"`{place.argument}` written here", place.origin.span, path))
    return tuple(out)


def _explain(fabric: FabricInst, problem: Problem, finding: Finding) -> Explanation:
    items = [Located(f"Configuration: {problem.scenario.describe()}")]
    if finding.lightning:
        items.append(Located(f"Lightning 2.6.6 checks it at `{finding.lightning}`"))
    if problem.error is not None:
        items.append(Located(f"It raises {problem.error.type}: {problem.error.message}"))
    else:
        items.append(Located(f"It warns: {problem.warning}"))
    items.append(Located(finding.message))
    return Explanation(_headline(fabric, problem, finding), tuple(items), _steps(fabric))


def _headline(fabric: FabricInst, problem: Problem, finding: Finding) -> str:
    how = "certainly" if finding.certainty is Certainty.CERTAIN else "possibly"
    what = "fails before training starts" if problem.error is not None else "runs another configuration than written"
    return f"**FAB008** — this `{fabric.class_name}(...)` {how} {what}"


def _steps(fabric: FabricInst) -> tuple[Located, ...]:
    chain: list[Any] = list(fabric.via)
    return tuple(Located(o.text, o.span, o.path) for o in chain)
