"""PL006: a ``Trainer(...)`` configuration Lightning rejects when the Trainer is built."""

from __future__ import annotations

import ast

from fabric_lsp import facts
from fabric_lsp.engine.findings import Certainty, Explanation, Located, Related, Verdict
from fabric_lsp.engine.lightning.configurations import CONNECTOR_ARGS
from fabric_lsp.engine.program.constructions import ConfigurationProblems, Problem, merged
from fabric_lsp.engine.python.values import TrainerInst
from fabric_lsp.engine.rule import Rule, RuleContext
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.rules.configuration_place import Place, place_of
from fabric_lsp.rules.expected import caught
from fabric_lsp.rules.pl006.docs import DOC, INVALID, SUMMARY, VALID
from fabric_lsp.rules.prefilters import PREFILTERS


class PL006(Rule):
    code = "PL006"
    name = "impossible-trainer-configuration"
    summary = SUMMARY
    doc = DOC
    valid = VALID
    invalid = INVALID
    fixable = False
    prefilter = PREFILTERS["PL006"]

    def sites(self, model: SemanticModel) -> list[ast.AST]:
        return list(_configured_trainer_calls(model))  # the verdict keeps those that build a Trainer

    def verdict(self, model: SemanticModel, call: ast.AST, ctx: RuleContext) -> Verdict | None:
        assert isinstance(call, ast.Call)
        if not facts.has_feature("removed_1x_api", ctx.lightning_version):
            return None  # 1.x's connector took other names and defaults (None, "dp" …)
        here = model.span(call)
        trainers = [
            v
            for v in model.values(call)
            if isinstance(v, TrainerInst) and v.args is not None and v.origin is not None and v.origin.span == here
        ]
        if not trainers:
            return None
        total = _registrable_left_out(model, merged([model.trainer_configuration_problems(t) for t in trainers]))
        problem = next(iter(total.problems), None)
        if problem is None or problem.error is None or caught(model, call, problem.error.type):
            return None
        check = facts.config_check(problem.error.message, facts.TRAINER_CONFIG_CHECKS)
        place = place_of(model, call, problem.scenario, check.arguments if check else ())
        certain = total.failing == total.configurations and not total.unknown
        certainty = Certainty.CERTAIN if certain else Certainty.POSSIBLE
        message = _message(model, call, problem, place, certain) + _hint(problem, place)
        related = _related(model, place)
        finding = self.finding(certainty, message, place.span, related, None, problem.error.where or "")
        return Verdict(self.code, here, finding, _explain(problem, finding.message, certain))


def _configured_trainer_calls(model: SemanticModel) -> list[ast.Call]:
    """The calls named like a Trainer that pass one of the connector's arguments (or ``**``): a
    Trainer built with its defaults alone is one Lightning takes."""

    def compute() -> list[ast.Call]:
        if model.module.tree is None or "Trainer" not in model.module.text:
            return []
        calls = model.module.calls_named_like(lambda name: name.endswith("Trainer"))
        return [
            c
            for c in calls
            if any(k.arg is None or k.arg in CONNECTOR_ARGS for k in c.keywords)
            # a keyword `Trainer.__init__` does not take fails first, before the connector (PL004)
            and all(k.arg is None or k.arg in facts.TRAINER_PARAMETERS for k in c.keywords)
        ]

    return list(model.asked_once(("pl006_configured_trainer_calls",), compute))


#: the checks of a name against the Trainer's registries, by the argument they read
_REGISTRY_CHECKS = {
    facts.TRAINER_CONNECTOR_LINES["strategy_name"]: "strategy",
    facts.TRAINER_CONNECTOR_LINES["accelerator_name"]: "accelerator",
}


def _registrable_left_out(model: SemanticModel, total: ConfigurationProblems) -> ConfigurationProblems:
    """``total`` without the names unknown to Lightning's registries where the project may add
    names to them (``StrategyRegistry.register("ddp_custom", ...)``): those configurations may run."""
    dropped = [p for p in total.problems if _may_be_registered(model, p)]
    if not dropped:
        return total
    kept = tuple(p for p in total.problems if p not in dropped)
    return ConfigurationProblems(kept, total.configurations, sum(p.error is not None for p in kept), total.unknown)


def _may_be_registered(model: SemanticModel, problem: Problem) -> bool:
    error = problem.error
    argument = _REGISTRY_CHECKS.get(error.where or "") if error is not None else None
    if argument is None or not isinstance(getattr(problem.scenario.args, argument, None), str):
        return False  # `None` is no name a project can register
    words = facts.REGISTERING_WORDS[argument]
    return any(w in model.module.text or model.other_modules_mentioning(w) for w in words)


def _written(problem: Problem, argument: str | None) -> str:
    args = problem.scenario.args
    if argument is None or args is None:
        return "`Trainer(...)`"
    return f"`{argument}={_shown(getattr(args, argument))}`"


def _message(model: SemanticModel, call: ast.Call, problem: Problem, place: Place, certain: bool) -> str:
    assert problem.error is not None
    written = _written(problem, place.argument)
    # Lightning's own words, without the list of choices and the link its invalid-name message adds
    raised = f"{problem.error.type}: {_sentence(problem.error.message.split(' Example choices')[0])}"
    callee = model.segment(call.func)
    if certain:
        return f"{written}: `{callee}(...)` raises {raised}"
    return f"{written}: `{callee}(...)` raises, for a configuration this code can choose ({_configuration(problem)}), {raised}"


def _configuration(problem: Problem) -> str:
    s = problem.scenario
    if s.args is None or s.outcome is None:
        return "; ".join(s.unknown)
    written = [f"{name}={_shown(getattr(s.args, name))}" for name, _ in s.origins if name not in s.assumed]
    return ", ".join(written) or "the Trainer's defaults"


def _shown(value: object) -> str:
    return f"{value.cls}(...)" if hasattr(value, "cls") else repr(value)


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text.endswith((".", "!", "?")) else text + "."


def _hint(problem: Problem, place: Place) -> str:
    """How 2.x spells what a 1.x ``Trainer`` took (``None``, a strategy given as the accelerator)."""
    value = getattr(problem.scenario.args, place.argument, "") if place.argument else ""
    if value is None and place.argument in ("accelerator", "strategy", "devices"):
        return f" `None` was Lightning 1.x's default; since 2.0 it is `{place.argument}='auto'` (or leave it out)."
    # a strategy 2.x still has, given as the accelerator (1.x's `dp`, `ddp2` … are no 2.x strategy either)
    if place.argument == "accelerator" and isinstance(value, str) and value.lower() in facts.TRAINER_STRATEGY_REGISTRY:
        return (
            f" `{value}` is a strategy (Lightning 1.6 and earlier took it as the accelerator):"
            f" pass `strategy={value!r}` and the device as `accelerator=`."
        )
    return ""


def _related(model: SemanticModel, place: Place) -> tuple[Related, ...]:
    if place.origin is None or place.argument is None:
        return ()
    path = place.origin.path if place.origin.path != model.path else None
    return (Related(f"`{place.argument}` written here", place.origin.span, path),)


def _explain(problem: Problem, message: str, certain: bool) -> Explanation:
    assert problem.error is not None
    items = (
        Located(f"Configuration: {problem.scenario.describe()}"),
        Located(f"Lightning 2.6.6 checks it at `{problem.error.where}`"),
        Located(message),
    )
    how = "certainly" if certain else "possibly"
    return Explanation(f"**PL006** — this `Trainer(...)` {how} fails when it is built", items)
