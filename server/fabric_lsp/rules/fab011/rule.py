"""FAB011: a strategy whose launcher cannot run in a notebook."""

from __future__ import annotations

import ast

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
    Span,
    Verdict,
    resolve_severity,
)
from fabric_lsp.engine.lightning import interactive
from fabric_lsp.engine.lightning.configurations import Scenario
from fabric_lsp.engine.lightning.connector import Launcher
from fabric_lsp.engine.python.values import FabricInst, Origin
from fabric_lsp.engine.rule import Rule, RuleContext
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.rules.fab011.docs import DOC, INVALID, VALID
from fabric_lsp.rules.prefilters import PREFILTERS

_FUNCTION_NOTE = "inside a function the notebook does not visibly call, which may run in a process of its own"


class FAB011(Rule):
    code = "FAB011"
    name = "strategy-not-interactive"
    summary = "A strategy whose launcher cannot run in a notebook (`ddp`, `ddp_spawn`, `fsdp`, `deepspeed`, …)"
    doc = DOC
    prefilter = PREFILTERS["FAB011"]
    fixable = True
    valid = VALID
    invalid = INVALID

    def sites(self, model: SemanticModel) -> list[ast.AST]:
        if not model.interactive:
            return []
        calls: list[ast.Call] = [*interactive.candidate_calls(model.module), *model.method_calls("launch")]
        calls.sort(key=lambda c: (c.lineno, c.col_offset))
        return list(calls)

    def verdict(self, model: SemanticModel, call: ast.AST, ctx: RuleContext) -> Verdict | None:
        assert isinstance(call, ast.Call)
        if isinstance(call.func, ast.Attribute) and call.func.attr == "launch":
            return self._fork_after_cuda(model, call)
        # a Fabric known only by its type has no origin: never built here, so not looked for
        fabrics = [f for f in model.fabrics(call, by_type=False)[0] if _built_at(model, call, f)]
        if not fabrics:
            return None
        scenarios = [s for f in fabrics for s in model.scenarios(f)]
        judgement = interactive.judge(scenarios)
        explanation = _explanation(fabrics, judgement)
        if not judgement.refused:
            return Verdict(self.code, model.span(call), None, explanation)
        top_level = interactive.runs_when_executed(model.module, call)
        certain = judgement.never_constructed and top_level
        finding = self._finding(model, call, fabrics, judgement, certain, top_level)
        return Verdict(self.code, model.span(call), finding, explanation)

    def _fork_after_cuda(self, model: SemanticModel, launch: ast.Call) -> Verdict | None:
        """``fabric.launch(fn)`` with a fork-based launcher on GPUs, after a cell that initialised
        CUDA: the forked processes fail. A warning: the cells may not have run in that order."""
        if not interactive.runs_when_executed(model.module, launch):
            return None
        line = interactive.cuda_initialised_before(model.module, launch)
        if line is None:
            return None
        # one known only by its type forks on no scenario (none is known): not looked for
        fabrics = model.fabrics(launch.func.value, by_type=False)[0]  # type: ignore[attr-defined]
        forking = [s for f in fabrics for s in model.scenarios(f) if _forks_on_gpus(s)]
        if not forking:
            return None
        rcv = model.segment(launch.func.value)  # type: ignore[attr-defined]
        cuda = model.module.lines.content(line - 1).strip()
        message = (
            f"`{rcv}.launch(...)` forks the processes ({forking[0].outcome.strategy} on GPUs, "  # type: ignore[union-attr]
            f"{forking[0].describe()}) after the notebook initialised CUDA (`{cuda}`): the processes fail with "
            f"{facts.FORK_AFTER_CUDA_ERROR} Move the CUDA use into the launched function and restart the kernel."
        )
        cuda_span = Span.of(line - 1, 0, line - 1, len(model.module.lines.content(line - 1)))
        finding = Finding(
            code=self.code,
            severity=resolve_severity(Certainty.POSSIBLE),
            message=message,
            span=model.span(launch),
            related=(Related("CUDA initialised here", cuda_span),),
            url=self.url,
            certainty=Certainty.POSSIBLE,
        )
        explanation = Explanation(
            "**FAB011** — possibly raises: a fork after CUDA initialisation",
            (Located(f"{s.outcome.strategy} — {s.describe()}") for s in forking[:3] if s.outcome),  # type: ignore[arg-type]
        )
        return Verdict(self.code, model.span(launch), finding, explanation)

    def _finding(
        self,
        model: SemanticModel,
        call: ast.Call,
        fabrics: list[FabricInst],
        judgement: interactive.InteractiveJudgement,
        certain: bool,
        top_level: bool,
    ) -> Finding:
        refused = judgement.refused
        written = _strategies(refused)
        where = "" if judgement.never_constructed else " " + _machines(refused)
        if certain:
            message = f"`Fabric(strategy={written})` raises RuntimeError in a notebook: its launcher is not fork-based."
        else:
            why = _FUNCTION_NOTE if judgement.never_constructed else "a configuration this code can choose"
            message = (
                f"`Fabric(strategy={written})` raises RuntimeError in a notebook{where} ({why}): "
                "its launcher is not fork-based."
            )
        fix, reason = _fix(model, call, fabrics, refused)
        message += ' Use `strategy="ddp_notebook"` with `fabric.launch(fn)`, or run the code as a script.'
        if fix is None:
            message += f" No automatic fix: {reason}."
        certainty = Certainty.CERTAIN if certain else Certainty.POSSIBLE
        return Finding(
            code=self.code,
            severity=resolve_severity(certainty),
            message=message,
            span=model.span(call),
            related=_related(model, fabrics, refused),
            fix=fix,
            url=self.url,
            certainty=certainty,
        )


def _built_at(model: SemanticModel, call: ast.Call, fabric: FabricInst) -> bool:
    """``fabric`` is judged at ``call``: built by it, or built outside this notebook (a factory
    of another module) and returned by it. One built elsewhere in the notebook is judged there."""
    origin = fabric.origin
    if origin is None:
        return False
    if origin.path is not None and origin.path != model.path:
        return True
    return origin.span == model.span(call)


def _strategies(scenarios: tuple[Scenario, ...]) -> str:
    names = dict.fromkeys(_strategy_label(s) for s in scenarios)
    return "|".join(names)


def _strategy_label(s: Scenario) -> str:
    label = s.label("strategy")
    if label and label.startswith("strategy="):
        return label[len("strategy=") :]
    return label or "'auto'"


def _machines(scenarios: tuple[Scenario, ...]) -> str:
    hosts = dict.fromkeys(s.outcome.host.describe() for s in scenarios if s.outcome is not None)
    return " and ".join(h.replace(" in a notebook", "") for h in hosts)


def _related(model: SemanticModel, fabrics: list[FabricInst], refused: tuple[Scenario, ...]) -> tuple[Related, ...]:
    related: list[Related] = []
    for s in refused:
        origin = s.origin("strategy")
        if origin is not None:
            _add(related, model, "Strategy chosen here", origin)
    for f in fabrics:
        if f.origin is not None:
            _add(related, model, f"{f.class_name} created here", f.origin)
    return tuple(related)


def _add(related: list[Related], model: SemanticModel, text: str, origin: Origin) -> None:
    path = origin.path if origin.path != model.path else None
    if not any(r.span == origin.span and r.path == path for r in related):
        related.append(Related(text, origin.span, path))


def _fix(
    model: SemanticModel, call: ast.Call, fabrics: list[FabricInst], refused: tuple[Scenario, ...]
) -> tuple[Fix | None, str]:
    """The safe ``"ddp"`` → ``"ddp_notebook"`` rewrite where it is equivalent, else why not."""
    origins = {s.origin("strategy") for s in refused}
    values = {s.args.strategy if s.args is not None else None for s in refused}
    origin = next(iter(origins)) if len(origins) == 1 else None
    if values != {"ddp"} or origin is None or origin.path not in (None, model.path):
        return None, 'only a literal `strategy="ddp"` has a fork-based equivalent (`"ddp_notebook"`)'
    literal = _literal(model, origin.span)
    if literal is None:
        return None, "the strategy is not written as a string literal here"
    launches = _launches(model, fabrics)
    if not launches or any(not c.args for c in launches):
        return None, "`ddp_notebook` needs `fabric.launch(fn)` with the function to run"
    first = min(launches, key=lambda c: (c.lineno, c.col_offset))
    if interactive.cuda_used_before(model.module, first) is not None:
        return None, "CUDA is used before the launch, and a fork after CUDA initialisation fails"
    quote = literal[0]
    edit = Edit(origin.span, f"{quote}{facts.NOTEBOOK_DDP_STRATEGY}{quote}")
    return Fix(f'Use strategy="{facts.NOTEBOOK_DDP_STRATEGY}"', Applicability.SAFE, (edit,)), ""


def _literal(model: SemanticModel, span: Span) -> str | None:
    lines = model.module.lines
    text = model.module.text[lines.offset(span.start) : lines.offset(span.end)]
    return text if text in ('"ddp"', "'ddp'") else None


def _launches(model: SemanticModel, fabrics: list[FabricInst]) -> list[ast.Call]:
    """The ``launch`` calls of the notebook whose receiver may be one of ``fabrics``."""
    spans = {f.origin.span for f in fabrics if f.origin is not None}
    out = []
    for c in model.method_calls("launch"):
        assert isinstance(c.func, ast.Attribute)
        found = model.fabrics(c.func.value, by_type=False)[0]  # one known only by its type has no origin
        if any(f.origin is not None and f.origin.span in spans for f in found):
            out.append(c)
    return out


def _accepted(s: Scenario) -> str:
    launcher = s.outcome.launcher if s.outcome is not None else None
    return (
        f"runs ({s.outcome.strategy if s.outcome else 'strategy'}, launcher: {launcher.value if launcher else 'none'})"
    )


def _explanation(fabrics: list[FabricInst], judgement: interactive.InteractiveJudgement) -> Explanation:
    items: list[Located] = []
    for s, verdict in [
        *((s, "refused: its launcher is not fork-based (connector.py:522)") for s in judgement.refused),
        *((s, _accepted(s)) for s in judgement.accepted),
        *((s, "not known statically") for s in judgement.unknown),
    ]:
        origin = s.origin("strategy")
        item = Located(f"{s.describe()}: {verdict}", origin.span if origin else None, origin.path if origin else None)
        if item not in items:
            items.append(item)
    steps: tuple[Located, ...] = ()
    for f in fabrics:
        chain = ([f.origin] if f.origin else []) + list(f.via)
        if len(chain) > 1:
            steps = tuple(Located(o.text, o.span, o.path) for o in chain)
            break
    headline = f"**Lightning `{fabrics[0].class_name}` in a notebook** — " + (
        "refused: its launcher is not fork-based" if judgement.refused else "its launcher can run in a notebook"
    )
    return Explanation(headline, tuple(items), steps)


def _forks_on_gpus(s: Scenario) -> bool:
    o = s.outcome
    return o is not None and o.error is None and o.launcher is Launcher.FORK and o.accelerator == "CUDAAccelerator"
