"""FAB002: a collective (Fabric's, torch.distributed's, a sharded model's forward) reached on some ranks only."""

from __future__ import annotations

import ast
import functools

from fabric_lsp import facts
from fabric_lsp.engine.findings import Certainty, Explanation, Finding, Located, Related, Verdict, resolve_severity
from fabric_lsp.engine.lightning.connector import Outcome
from fabric_lsp.engine.program.ranks import RankGuard, direct_rank_guard, paired
from fabric_lsp.engine.python.astwalk import walk
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.python.values import FabricInst
from fabric_lsp.engine.rule import Rule, RuleContext
from fabric_lsp.engine.semantic.certainty import Judgement, by_outcome, judge_fabrics
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.rules.fab002 import reach
from fabric_lsp.rules.fab002.docs import DOC, INVALID, SUMMARY, VALID
from fabric_lsp.rules.fab002.fix import remove_guard
from fabric_lsp.rules.prefilters import PREFILTERS
from fabric_lsp.rules.scenario_text import process_related

METHODS = facts.COLLECTIVE_METHODS


def _collective(method: str, outcome: Outcome) -> bool:
    if method == "load_raw":
        return outcome.kind in facts.LOAD_RAW_COLLECTIVE_KINDS
    return True


def describe_guard(guard: RankGuard) -> str:
    """Where the call runs: ``only where `fabric.global_rank == 0` is true`` …"""
    if guard.how == "branch" or guard.how == "expression":
        return f"it only runs where `{guard.text}` is {'true' if guard.truth else 'false'}"
    if guard.how == "exit":
        return f"it only runs on the ranks that pass the early exit on `{guard.text}`"
    if guard.how == "assert":
        return f"it only runs where `assert {guard.text}` holds"
    if guard.how == "decorator":
        return f"it is in `{guard.function.name}`, decorated with `@{facts.RANK_ZERO_ONLY}` (rank 0 only)"  # type: ignore[union-attr]
    if guard.how == "callers":
        tests = ", ".join(dict.fromkeys(f"`{g.text}`" for _, g in guard.callers))
        return f"it is in `{guard.function.name}`, which is only called on some ranks ({tests})"  # type: ignore[union-attr]
    return (
        f"it is inside `with {guard.text}:`, whose body rank 0 runs while the other ranks wait at "
        "the context's own barrier, so rank 0 waits in the collective for ranks that never join it"
    )


def _what(method: str) -> str:
    if method in ("save", "load"):
        return f"`{method}` is a collective every process must call (it ends in `barrier()`)"
    if method == "load_raw":
        return "`load_raw` is a collective under this strategy (it broadcasts the path from rank 0)"
    return f"`{method}` is a collective every process must call"


def _processes(judgement: Judgement) -> str:
    sizes = sorted({s.outcome.world_size for s in judgement.failing if s.outcome is not None})
    return " or ".join(str(n) for n in sizes) + " processes"


class FAB002(Rule):
    code = "FAB002"
    name = "collective-on-some-ranks"
    summary = SUMMARY
    doc = DOC
    valid = VALID
    invalid = INVALID
    fixable = True
    #: a rank guard names a rank (``global_rank``, ``rank_zero_only``, ``get_rank``, ``LOCAL_RANK`` …),
    #: ``is_global_zero`` or ``rank_zero_first`` (each searched only where its words are)
    prefilter = PREFILTERS["FAB002"]

    def sites(self, model: SemanticModel) -> list[ast.AST]:
        calls: list[ast.Call] = [c for m in METHODS for c in model.method_calls(m)]
        calls += _guarded_other_calls(model)
        calls.sort(key=lambda c: (c.lineno, c.col_offset))
        return list(calls)

    def verdict(self, model: SemanticModel, call: ast.AST, ctx: RuleContext) -> Verdict | None:
        assert isinstance(call, ast.Call)
        guard = model.rank_guard(call)  # asked first: it reads the syntax (and the callers), not values
        if guard is None:
            return None  # every rank runs it
        if not _is_method_site(call):
            return self._reach_verdict(model, call, guard)
        assert isinstance(call.func, ast.Attribute)
        fabrics, unknown = model.fabrics(call.func.value, by_type=False)
        if not fabrics:
            reached = self._reach_verdict(model, call, guard)  # `dist.barrier()`, a model's method named `load` …
            # a Fabric known only by its type (jedi) is judged instead, which gives a hint at most:
            # asked only where that hint is wanted or the call's other verdict would report
            if not unknown or (reached is None and not ctx.report_unknown):
                return reached
            fabrics, unknown = model.fabrics(call.func.value)
            if not fabrics:
                return reached
        if paired(
            model.module,
            call,
            guard,
            facts.BARRIER_ENDING if call.func.attr in facts.BARRIER_ENDING else (call.func.attr,),
        ):
            return None
        method = call.func.attr
        judgement = judge_fabrics(
            model, fabrics, len(unknown), by_outcome(lambda o: o.world_size > 1 and _collective(method, o))
        )
        explanation = _explain(model, fabrics, guard, judgement, method)
        certainty = judgement.failure
        if certainty is None:
            return Verdict(self.code, model.span(call), None, explanation)
        return Verdict(
            self.code, model.span(call), self._finding(model, call, guard, judgement, certainty, fabrics), explanation
        )

    def _reach_verdict(self, model: SemanticModel, call: ast.Call, guard: RankGuard) -> Verdict | None:
        """A rank-guarded call that reaches a collective through a helper, or is an implicit one."""
        if reach.paired_at(model, call, guard):
            return None
        judged = reach.strongest(model, call, guard)
        if judged is None:
            return None
        certainty = judged.certainty
        if certainty is Certainty.CERTAIN:
            tail = f"with {_processes(judged.judgement)} {reach.consequence(judged)}"
        else:
            tail = f"when this Fabric runs {_processes(judged.judgement)}, which this code can choose, {reach.consequence(judged)}"
        message = (
            f"{reach.what(model, judged)}, but {describe_guard(guard)}; {tail}. Run it on every rank "
            "(keep only the printing or writing under the guard)."
        )
        finding = Finding(
            code=self.code,
            severity=resolve_severity(certainty),
            message=message,
            span=model.span(call),
            related=tuple(
                dict.fromkeys([*_related(model, guard, judged.judgement, []), *reach.related(model, judged)])
            ),
            url=self.url,
            certainty=certainty,
        )
        explanation = _explain(model, judged.fabrics, guard, judged.judgement, judged.reach.name)
        return Verdict(self.code, model.span(call), finding, explanation)

    def _finding(
        self,
        model: SemanticModel,
        call: ast.Call,
        guard: RankGuard,
        judgement: Judgement,
        certainty: Certainty,
        fabrics: list[FabricInst],
    ) -> Finding:
        assert isinstance(call.func, ast.Attribute)
        rcv, method = model.segment(call.func.value), call.func.attr
        consequence = "the other ranks hang until the process-group timeout (30 minutes by default) or crash"
        consequence += " at their next collective"
        if certainty is Certainty.CERTAIN:
            message = (
                f"`{rcv}.{method}(...)`: {_what(method)}, but {describe_guard(guard)}; "
                f"with {_processes(judgement)} {consequence}."
            )
        else:
            message = (
                f"`{rcv}.{method}(...)`: {_what(method)}, but {describe_guard(guard)}; when this Fabric runs "
                f"{_processes(judgement)}, which this code can choose, {consequence}."
            )
        fix, why_not = remove_guard(model, call, guard)
        message += (
            " Fix: remove the guard (Fabric already writes on the right ranks)."
            if fix
            else f" Move the call out of the guard{why_not}."
        )
        return Finding(
            code=self.code,
            severity=resolve_severity(certainty),
            message=message,
            span=model.span(call),
            related=_related(model, guard, judgement, fabrics),
            fix=fix,
            url=self.url,
            certainty=certainty,
        )


def _is_method_site(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr in METHODS


def _guarded_other_calls(model: SemanticModel) -> list[ast.Call]:
    """The document's calls that are not Fabric collective methods and that a rank test, a
    ``rank_zero_first()`` or ``@rank_zero_only`` around them restricts to some ranks (only the
    module-level statements that name a rank can hold one: :func:`_rank_statements`)."""
    module = model.module
    return [
        node
        for top in _rank_statements(module)
        for node in module.calls_in(top)
        if isinstance(node.func, (ast.Name, ast.Attribute))
        and not _is_method_site(node)
        and direct_rank_guard(module, node) is not None
    ]


def _rank_statements(module: ModuleInfo) -> list[ast.stmt]:
    """The module-level statements whose text names a rank (the words of the rule's prefilter:
    ``global_rank``, ``get_rank``, ``is_global_zero``, ``rank_zero_only``, ``LOCAL_RANK`` …) or a
    module-level name bound from one (``IS_MAIN = LOCAL_RANK == 0``, tested in a function): a
    rank guard is in the statement of the call it guards, and reads only such names."""
    if module.tree is None:
        return []
    body = module.tree.body
    names = set(filter(_names_a_rank, module.index))
    ids: set[int] = set()
    while True:
        found = {i for w in names for i in module.index.get(w, ())}
        bound = {t.id for i in found - ids for t in _assigned_names(body[i])} - names
        ids = found
        if not bound:
            return [body[i] for i in sorted(ids)]
        names |= bound


@functools.lru_cache(maxsize=1 << 16)
def _names_a_rank(word: str) -> bool:
    """Whether the identifier ``word`` names a rank (the rule's prefilter), once per word: the
    modules of a project share most of their words."""
    return FAB002.prefilter.matches(word)


def _assigned_names(stmt: ast.stmt) -> list[ast.Name]:
    """The names a module-level assignment binds (``a = ...``, ``a: T = ...``, ``a, b = ...``)."""
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        targets = [stmt.target]
    else:
        return []
    return [n for t in targets for n in walk(t) if isinstance(n, ast.Name)]


def _related(
    model: SemanticModel, guard: RankGuard, judgement: Judgement, fabrics: list[FabricInst]
) -> tuple[Related, ...]:
    out: list[Related] = [
        Related(
            "Only some ranks get past this", guard.module.span(guard.holder if guard.how != "branch" else guard.node)
        )
    ]
    for call, g in guard.callers:
        out.append(Related(f"Called here, under `{g.text}`", guard.module.span(call)))
    out += [r for r in process_related(model, judgement.failing, fabrics) if r not in out]
    return tuple(out)


def _explain(
    model: SemanticModel, fabrics: list[FabricInst], guard: RankGuard, judgement: Judgement, method: str
) -> Explanation:
    items = [Located(f"Reached on some ranks only: {describe_guard(guard)}", guard.module.span(guard.node), None)]
    for call, g in guard.callers:
        items.append(Located(f"called under `{g.text}`", guard.module.span(call)))
    for s in judgement.failing[:4]:
        assert s.outcome is not None
        items.append(Located(f"{s.outcome.strategy} with {s.outcome.world_size} processes — {s.describe()}"))
    for s in judgement.passing[:2]:
        assert s.outcome is not None
        items.append(Located(f"one process ({s.outcome.strategy}) — {s.describe()}: no hang"))
    for s in judgement.unknown[:2]:
        items.append(Located(f"not known statically: {s.describe()}"))
    steps: tuple[Located, ...] = ()
    for f in fabrics:
        chain = ([f.origin] if f.origin else []) + list(f.via)
        if len(chain) > 1:
            steps = tuple(Located(o.text, o.span, o.path) for o in chain)
            break
    certainty = judgement.failure
    verdict = (
        {
            Certainty.CERTAIN: "certainly hangs or crashes (several processes)",
            Certainty.POSSIBLE: "possibly hangs or crashes (several processes on some configurations)",
        }.get(certainty, "runs: one process, or a configuration not known statically")
        if certainty
        else "runs: one process, or a configuration not known statically"
    )
    return Explanation(f"**FAB002** — `{method}` on some ranks only: {verdict}", tuple(items), steps)
