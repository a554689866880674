"""FAB003: a method other than ``forward`` called on a set-up model whose strategy wraps it, where
the method runs a module and is not marked with ``mark_forward_method``."""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, replace

from fabric_lsp import facts
from fabric_lsp.engine.findings import Certainty, Explanation, Finding, Located, Related, Verdict, resolve_severity
from fabric_lsp.engine.lightning.configurations import Scenario
from fabric_lsp.engine.program.model_methods import MethodRun
from fabric_lsp.engine.program.setups import FUNC_TYPES, SetupCall, origin_key
from fabric_lsp.engine.python.values import FabricInst
from fabric_lsp.engine.rule import Rule, RuleContext
from fabric_lsp.engine.semantic.certainty import Judgement, judge, narrow_scenarios
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.rules.fab003.docs import DOC, INVALID, SUMMARY, VALID
from fabric_lsp.rules.fab003.fix import mark_fix
from fabric_lsp.rules.prefilters import PREFILTERS
from fabric_lsp.rules.scenario_text import describe_strategies, fabric_lines, scenario_related

LIGHTNING_MESSAGE = (
    "You are calling the method `{cls}.{name}()` from outside the model. To avoid issues with the currently "
    "selected strategy, explicitly mark it as a forward method with `fabric_model.mark_forward_method({name!r})` "
    "after `fabric.setup()`."
)
#: how a message names the wrapper ``fabric.setup`` puts around a compiled model (fabric.py:288-289)
COMPILED = "the `torch.compile` wrapper that `fabric.setup` re-applies to the compiled model"
#: receiver names worth asking about: a parameter of these names may hold a set-up model
_MODEL_WORDS = re.compile(r"model|net|module|policy|actor|critic|generator|encoder|decoder", re.IGNORECASE)


@functools.lru_cache(maxsize=1 << 16)
def _named_like_a_model(word: str) -> bool:
    """Whether the identifier ``word`` is named like a model (:data:`_MODEL_WORDS`), once per word:
    the modules of a project share most of their words."""
    return _MODEL_WORDS.search(word) is not None


def _fails(s: Scenario) -> bool | None:
    assert s.outcome is not None
    return s.outcome.wraps_module


@dataclass(frozen=True)
class _Runs:
    """The methods ``model.<name>()`` may run, and how certain it is that one of them runs a module."""

    runs: list[MethodRun]
    certainty: Certainty | None


class FAB003(Rule):
    code = "FAB003"
    name = "non-forward-method-on-wrapped-model"
    summary = SUMMARY
    doc = DOC
    valid = VALID
    invalid = INVALID
    fixable = True
    prefilter = PREFILTERS["FAB003"]
    needs_setups = True

    def sites(self, model: SemanticModel) -> list[ast.AST]:
        if not model.may_see_setups():
            return []
        names = _setup_targets(model)
        module = model.module
        words = names | set(filter(_named_like_a_model, module.index))  # parameters named like a model
        tops = {id(top): top for word in words for top in module.tops_with(word)}
        out = [
            node
            for top in tops.values()
            for node in module.calls_in(top)
            if _judged_call(node) and _candidate(model, node, names)
        ]
        calls = sorted(out, key=lambda c: (c.lineno, c.col_offset))
        return list(calls)

    def verdict(self, model: SemanticModel, call: ast.AST, ctx: RuleContext) -> Verdict | None:
        assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
        name = call.func.attr
        setups = model.set_up_models(call.func.value)
        if not setups:
            return None
        if model.forward_marks(setups, name):
            return Verdict(
                self.code,
                model.span(call),
                None,
                Explanation(f"**`{name}` is marked as a forward method**: it runs through the wrapper"),
            )
        runs = _method_runs(model, setups, name)
        if runs.certainty is None:
            return Verdict(self.code, model.span(call), None, _explain_runs(model, name, runs))
        fabrics = _fabrics(setups)
        scenarios = _scenarios(model, call, setups, fabrics)
        judgement, compiled = _with_compile(model, setups, judge(scenarios, _fails))
        certainty = _combine(judgement, runs, setups)
        version = ctx.lightning_version
        if certainty is not None and not facts.has_feature("forward_redirection_error", version):
            note = f"Lightning {version} only warns here (the error arrives in 2.2)"
            return Verdict(self.code, model.span(call), None, _explain(model, call, runs, fabrics, judgement, note))
        finding = None
        if certainty is not None:
            finding = self._finding(model, call, setups, runs, judgement, certainty, version, compiled)
        return Verdict(
            self.code, model.span(call), finding, _explain(model, call, runs, fabrics, judgement, "", compiled)
        )

    def _finding(
        self,
        model: SemanticModel,
        call: ast.Call,
        setups: list[SetupCall],
        runs: _Runs,
        j: Judgement,
        certainty: Certainty,
        version: str,
        compiled: bool,
    ) -> Finding:
        assert isinstance(call.func, ast.Attribute)
        name = call.func.attr
        receiver = model.segment(call.func.value)
        run = next(r for r in runs.runs if r.runs is not None)
        assert run.runs is not None
        wrappers = _describe_wrappers(j.failing)
        if compiled:
            wrappers = COMPILED + (f" or {wrappers}" if j.failing else "")
        owner = run.owner if run.kind == "method" else "…"
        lightning = f'"You are calling the method `{owner}.{name}()` from outside the model…"'
        if certainty is Certainty.CERTAIN:
            message = (
                f"`{receiver}.{name}()` raises RuntimeError {lightning}: {wrappers} wraps the set-up model, and "
                f'{run.runs.text}; call `{receiver}.mark_forward_method("{name}")` after `fabric.setup`.'
            )
        else:
            message = (
                f"`{receiver}.{name}()` raises RuntimeError {lightning} if {wrappers} wraps the set-up model, "
                f'which this code can choose, and {run.runs.text}; call `{receiver}.mark_forward_method("{name}")` '
                "after `fabric.setup`."
            )
        fix, reason = mark_fix(model.module, call, setups, name, version)
        if fix is None:
            message += f" No automatic fix: {reason}."
        related = [Related("Model set up here", s.module.span(s.call), _path(model, s.module.path)) for s in setups]
        for r in runs.runs:
            if r.runs is not None and r.runs.call is not None and r.runs.module is not None:
                related.append(
                    Related(
                        f"`{r.owner}.{name}` runs a module here",
                        r.runs.module.span(r.runs.call),
                        _path(model, r.runs.module.path),
                    )
                )
        related += scenario_related(model, j.failing)
        return Finding(
            code=self.code,
            severity=resolve_severity(certainty),
            message=message,
            span=model.span(call),
            related=tuple(dict.fromkeys(related)),
            fix=fix,
            url=self.url,
            certainty=certainty,
        )


def _judged_call(node: ast.Call) -> bool:
    return isinstance(node.func, ast.Attribute) and _judged_name(node.func.attr)


def _judged_name(name: str) -> bool:
    """Names whose calls on a ``_FabricModule`` go through the call tracker (wrappers.py:244-264)."""
    if name.startswith("__") and name.endswith("__"):
        return False
    return name not in facts.FABRIC_MODULE_ATTRIBUTES and name not in facts.FORWARD_REDIRECTED_METHODS


def _setup_targets(model: SemanticModel) -> set[str]:
    """Names (and ``self.<attr>`` attributes) the document binds to the result of a
    ``.setup(...)``/``.setup_module(...)`` call (read from the text: whether the receiver is a
    Fabric is the verdict's question)."""
    out: set[str] = set()
    for call in (c for name in facts.MODEL_SETUP_METHODS for c in model.method_calls(name)):
        stmt = model.module.parent_of(call)
        targets = (
            stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
        )
        for t in targets:
            first = t.elts[0] if isinstance(t, (ast.Tuple, ast.List)) and t.elts else t
            if isinstance(first, ast.Name):
                out.add(first.id)
            elif isinstance(first, ast.Attribute):
                out.add(first.attr)
    return out


def _candidate(model: SemanticModel, call: ast.Call, names: set[str]) -> bool:
    """A cheap test before inference: the receiver is a name or ``self.<attr>`` bound to a setup's
    result in this document, or a parameter whose name suggests a model."""
    receiver = call.func.value  # type: ignore[attr-defined]
    if isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name):
        return receiver.attr in names
    if not isinstance(receiver, ast.Name):
        return False
    if receiver.id in names:
        return True
    scope = model.module.scope_of(call)
    if not isinstance(scope, FUNC_TYPES):
        return False
    params = {a.arg for a in (*scope.args.posonlyargs, *scope.args.args, *scope.args.kwonlyargs)}
    return receiver.id in params and bool(_MODEL_WORDS.search(receiver.id))


def _method_runs(model: SemanticModel, setups: list[SetupCall], name: str) -> _Runs:
    """What the call runs for each class the set-up model may be: certain when every class is
    known and each runs a module unconditionally; possible when one of them may."""
    runs: list[MethodRun] = []
    unknown = False
    for s in setups:
        classes, some_unknown = model.model_classes(s)
        unknown = unknown or some_unknown
        runs += [model.method_run(c, name) for c in classes]
    found = [r for r in runs if r.runs is not None]
    if not found:
        return _Runs(runs, None)
    if unknown or len(found) < len(runs) or any(r.runs is not None and r.runs.conditional for r in found):
        return _Runs(runs, Certainty.POSSIBLE)
    return _Runs(runs, Certainty.CERTAIN)


def _with_compile(model: SemanticModel, setups: list[SetupCall], j: Judgement) -> tuple[Judgement, bool]:
    """A model compiled before setup is wrapped on every strategy (facts.COMPILE_FUNCTIONS): certain
    when every setup is given one, possible when some may be."""
    found = [model.compiled_model(s) for s in setups]
    if found and all(f is True for f in found):
        return Judgement(Certainty.CERTAIN, j.failing, (), j.passing), True
    if any(f is not False for f in found) and j.certainty not in (Certainty.CERTAIN, Certainty.POSSIBLE):
        return replace(j, certainty=Certainty.POSSIBLE), True
    return j, False


def _combine(j: Judgement, runs: _Runs, setups: list[SetupCall]) -> Certainty | None:
    if j.certainty not in (Certainty.CERTAIN, Certainty.POSSIBLE):
        return None
    if j.certainty is Certainty.CERTAIN and runs.certainty is Certainty.CERTAIN and not any(s.unknown for s in setups):
        return Certainty.CERTAIN
    return Certainty.POSSIBLE


def _fabrics(setups: list[SetupCall]) -> list[FabricInst]:
    out: dict[tuple, FabricInst] = {}
    for s in setups:
        for f in s.fabrics:
            out.setdefault(origin_key(f), f)
    return list(out.values())


def _scenarios(
    model: SemanticModel, call: ast.Call, setups: list[SetupCall], fabrics: list[FabricInst]
) -> list[Scenario]:
    scenarios = [s for f in fabrics for s in model.scenarios(f)]
    if (
        len(setups) == 1
        and setups[0].module is model.module
        and model.module.scope_of(setups[0].call) is model.module.scope_of(call)
    ):
        receiver = setups[0].call.func.value  # type: ignore[attr-defined]
        return narrow_scenarios(model.module, model.inference, receiver, call, scenarios)
    return scenarios


def _describe_wrappers(failing: tuple[Scenario, ...], limit: int = 2) -> str:
    return describe_strategies(failing, limit)


def _path(model: SemanticModel, path: str | None) -> str | None:
    return None if path == model.path else path


def _run_lines(model: SemanticModel, name: str, runs: _Runs) -> list[Located]:
    items: list[Located] = []
    for r in runs.runs:
        where = r.runs
        if r.kind == "not-method":
            items.append(
                Located(
                    f"`{r.owner}.{name}` is not a method (a submodule, a property or a staticmethod): never wrapped"
                )
            )
        elif r.kind == "unknown":
            items.append(Located(f"`{r.owner}.{name}` is not found in analysed source"))
        elif where is None:
            span = model.module.span(r.method) if r.method is not None and r.module is model.module else None
            items.append(Located(f"`{r.owner}.{name}` runs no module this analysis sees", span))
        elif where.call is not None and where.module is not None:
            cond = " (on some paths)" if where.conditional else ""
            items.append(
                Located(
                    f"`{r.owner}.{name}`: {where.text}{cond}",
                    where.module.span(where.call),
                    _path(model, where.module.path),
                )
            )
        else:
            items.append(Located(f"`{r.owner}.{name}`: {where.text}"))
    return items


def _explain_runs(model: SemanticModel, name: str, runs: _Runs) -> Explanation:
    items = _run_lines(model, name, runs) or [Located("the set-up model's class is not known statically")]
    return Explanation(
        f"**`.{name}()` on a set-up model** — no module run found: Lightning raises only when the method runs a module",
        tuple(items),
    )


def _explain(
    model: SemanticModel,
    call: ast.Call,
    runs: _Runs,
    fabrics: list[FabricInst],
    j: Judgement,
    note: str,
    compiled: bool = False,
) -> Explanation:
    name = call.func.attr  # type: ignore[attr-defined]
    if note:
        head = note
    elif j.certainty is Certainty.CERTAIN and runs.certainty is Certainty.CERTAIN:
        head = f'certainly raises: mark it with `mark_forward_method("{name}")`'
    elif j.certainty in (Certainty.CERTAIN, Certainty.POSSIBLE):
        head = "possibly raises: for a configuration or a class this code can choose"
    elif j.certainty is Certainty.UNKNOWN:
        head = "strategy not known statically"
    else:
        head = "no strategy this code can choose wraps the model"
    items = _run_lines(model, name, runs)
    created, steps = fabric_lines(model, fabrics)
    items += created
    if compiled:
        items.append(Located(f"wraps the model: {COMPILED} (fabric.py:288-289), on every strategy"))
    for s in j.failing:
        items.append(
            Located(f"wraps the model: {s.describe()} → `{s.outcome.strategy}`" if s.outcome else s.describe())
        )
    for s in j.unknown:
        items.append(Located(f"unknown: {s.describe()}"))
    return Explanation(f"**`.{name}()` on a set-up model** — {head}", tuple(dict.fromkeys(items)), steps)
