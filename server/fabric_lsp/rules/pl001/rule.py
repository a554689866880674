"""PL001: a Trainer-side collective (``trainer.save_checkpoint``, ``self.all_gather``,
``self.log(..., sync_dist=True)``, ``trainer.strategy.barrier/broadcast/reduce``, ``trainer.log_dir``)
reached on some ranks only. The rank guards are FAB002's (``engine/program/ranks.py``)."""

from __future__ import annotations

import ast

from fabric_lsp import facts
from fabric_lsp.engine.findings import Certainty, Finding, Verdict, resolve_severity
from fabric_lsp.engine.program.ranks import divided_ranks
from fabric_lsp.engine.python.astwalk import walk
from fabric_lsp.engine.python.calls import bind_args
from fabric_lsp.engine.python.flow import enclosing_function
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.python.values import ClassRef, TrainerInst
from fabric_lsp.engine.rule import Rule, RuleContext
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.rules.fab002.rule import describe_guard
from fabric_lsp.rules.pl001.docs import DOC, INVALID, SUMMARY, VALID
from fabric_lsp.rules.pl001.processes import combined, may_spawn, trainer_processes
from fabric_lsp.rules.prefilters import PREFILTERS

#: collectives of the Trainer's strategy, and whether they matter outside a hook (barrier and
#: broadcast do nothing before the process group exists: ``strategies/ddp.py``)
STRATEGY_COLLECTIVES = ("barrier", "broadcast", "reduce")
LOG_METHODS = ("log", "log_dict")
#: the methods whose calls :func:`_what` may name (``trainer.log_dir`` is an attribute)
_SITE_METHODS = ("save_checkpoint", *STRATEGY_COLLECTIVES, "all_gather", *LOG_METHODS)


def _is_trainer_text(node: ast.AST) -> bool:
    """``trainer``, ``self.trainer``, ``pl_module.trainer``, ``self._trainer``."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name.lstrip("_").lower().endswith("trainer")


def _keyword_true(call: ast.Call, name: str) -> bool:
    return any(kw.arg == name and isinstance(kw.value, ast.Constant) and kw.value.value is True for kw in call.keywords)


def _what(node: ast.AST, module: ModuleInfo) -> str | None:
    """What kind of Trainer collective ``node`` is (None: not one)."""
    if isinstance(node, ast.Attribute) and node.attr == "log_dir" and _is_trainer_text(node.value):
        return "`trainer.log_dir` broadcasts the folder from rank 0"
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    method, rcv = node.func.attr, node.func.value
    if method == "save_checkpoint" and _is_trainer_text(rcv):
        return "`save_checkpoint` is a collective every process must call (the strategy ends it in `barrier()`)"
    if (
        method in STRATEGY_COLLECTIVES
        and isinstance(rcv, ast.Attribute)
        and rcv.attr == "strategy"
        and _is_trainer_text(rcv.value)
    ):
        return f"`strategy.{method}` is a collective every process must call"
    lightning_module = _lightning_module_text(rcv, node, module)
    if lightning_module and method == "all_gather":
        return f"`{lightning_module}.all_gather` is a collective every process must call"
    if (
        lightning_module
        and method in LOG_METHODS
        and _keyword_true(node, "sync_dist")
        and not _keyword_true(node, "rank_zero_only")
    ):
        return f"`{lightning_module}.{method}(..., sync_dist=True)` reduces the value across every process"
    return None


def _lightning_module_text(rcv: ast.AST, node: ast.AST, module: ModuleInfo) -> str | None:
    """``self`` (a LightningModule's own method), or the module parameter of a Callback hook
    (``def on_train_epoch_end(self, trainer, pl_module)``: the third positional parameter)."""
    if not isinstance(rcv, ast.Name):
        return None
    if rcv.id == "self":
        return "self"
    func = enclosing_function(module, node)
    params = func.args.args if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
    in_class = func is not None and module.enclosing_class(func) is not None
    return (
        rcv.id
        if in_class and len(params) >= 3 and params[2].arg == rcv.id and params[1].arg.lstrip("_").endswith("trainer")
        else None
    )


def _class_of(module: ModuleInfo, node: ast.AST) -> ast.ClassDef | None:
    func = enclosing_function(module, node)
    while func is not None:
        cls = module.enclosing_class(func)
        if cls is not None:
            return cls
        func = enclosing_function(module, func)
    return None


def _is_trainer_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == "Trainer") or (
        isinstance(func, ast.Attribute) and func.attr == "Trainer"
    )


def _trainers(model: SemanticModel, expr: ast.AST, module: ModuleInfo) -> list[TrainerInst] | None:
    """The Trainers ``expr`` (written in ``module``) may be, each with its arguments: through
    assignments, factories, other modules. None where some alternative is not one."""
    values = model.values(expr) if module is model.module else model.inference.evaluate(expr, module)
    found = [v for v in values if isinstance(v, TrainerInst) and v.args is not None]
    return found if found and len(found) == len(values) else None


def _callback_trainers(model: SemanticModel, cls: ast.ClassDef) -> list[TrainerInst]:
    """The ``Trainer(callbacks=[...])`` constructions of the workspace naming the callback class."""
    out: list[TrainerInst] = []
    for module in [model.module, *model.other_modules_mentioning(cls.name)]:
        if module.tree is None:
            continue
        for node in walk(module.tree):
            if _is_trainer_call(node):
                assert isinstance(node, ast.Call)
                given = [kw.value for kw in node.keywords if kw.arg == "callbacks"]
                if any(cls.name in module.segment(v) for v in given):
                    out += _trainers(model, node, module) or []
    return out


def _trainer_of(node: ast.AST) -> ast.AST:
    """The trainer expression of a site (``trainer`` of ``trainer.strategy.barrier()``)."""
    rcv = node.value if isinstance(node, ast.Attribute) else node.func.value  # type: ignore[attr-defined]
    return rcv.value if isinstance(rcv, ast.Attribute) and rcv.attr == "strategy" else rcv


def trainers_running(model: SemanticModel, node: ast.AST) -> list[TrainerInst] | None:
    """The Trainers that may run ``node`` (None: some are not visible): the receiver's in the
    script, those of the entry points that run a LightningModule's hook, those a callback is given to."""
    cls = _class_of(model.module, node)
    if cls is None:
        return _trainers(model, _trainer_of(node), model.module)
    lc = model.lightning_class(ClassRef(cls, model.module))
    if lc is None:
        return None
    if lc.base == facts.CALLBACK_CLASS:
        return _callback_trainers(model, cls) or None
    if lc.base != facts.LIGHTNING_MODULE_CLASS:
        return None
    found: list[TrainerInst] = []
    for ep in model.entry_points(lc.cls):
        if ep.cli or not isinstance(ep.call.func, ast.Attribute):
            return None  # a LightningCLI's Trainer is built from the command line
        built = _trainers(model, ep.call.func.value, ep.module)
        if built is None:
            return None
        found += built
    return found or None


def _after_spawn_or_before_fit(model: SemanticModel, node: ast.AST, trainers: list[TrainerInst]) -> bool:
    """A site of the script, outside the hooks: before ``fit`` the process group does not exist
    (``barrier``, ``broadcast``, ``log_dir`` do nothing); after it, under a spawning strategy, only
    the launching process runs the script."""
    if _class_of(model.module, node) is not None:
        return False
    if not _after_an_entry_point(model, node):
        return True
    return any(may_spawn(model, t) for t in trainers)


def _after_an_entry_point(model: SemanticModel, node: ast.AST) -> bool:
    """Whether a ``trainer.fit/validate/test/predict(...)`` call of the same trainer name comes
    before ``node`` in the script (the process group then exists) — or, for a site in a helper
    whose Trainer is a parameter (``def save(trainer): ...``), before a call of the helper that
    passes that trainer."""
    for line, name in _run_points(model, node):
        for method in facts.TRAINER_ENTRY_POINTS:
            for call in model.method_calls(method):
                func = call.func
                if (
                    call.lineno < line
                    and isinstance(func, ast.Attribute)
                    and isinstance(func.value, ast.Name)
                    and func.value.id == name
                ):
                    return True
    return False


def _run_points(model: SemanticModel, node: ast.AST) -> list[tuple[int, str | None]]:
    """Where ``node`` runs in the script, with the name its trainer has there: its own line, or
    each call of the module-level function it is in whose trainer parameter gets a name."""
    rcv = _trainer_of(node)
    name = rcv.id if isinstance(rcv, ast.Name) else None
    here = [(node.lineno, name)]  # type: ignore[attr-defined]
    func = enclosing_function(model.module, node)
    if (
        not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef))
        or model.module.parent_of(func) is not model.module.tree
    ):
        return here
    params = [p.arg for p in (*func.args.posonlyargs, *func.args.args)]
    if name not in params:
        return here
    points: list[tuple[int, str | None]] = []
    for call in model.module.calls_by_name.get(func.name, []):
        if not isinstance(call.func, ast.Name):
            continue
        given = bind_args(params, [p.arg for p in func.args.kwonlyargs], list(call.args), call.keywords).get(name)
        if isinstance(given, ast.Name):
            points.append((call.lineno, given.id))
    return points or here


class PL001(Rule):
    code = "PL001"
    name = "trainer-collective-on-some-ranks"
    summary = SUMMARY
    doc = DOC
    valid = VALID
    invalid = INVALID
    fixable = False
    prefilter = PREFILTERS["PL001"]

    def sites(self, model: SemanticModel) -> list[ast.AST]:
        m = model.module
        if m.tree is None:
            return []
        found: list[ast.AST] = [c for name in _SITE_METHODS for c in m.calls_named(name) if _what(c, m) is not None]
        found += [
            n
            for top in m.tops_with("log_dir")
            for n in walk(top)
            if isinstance(n, ast.Attribute) and _what(n, m) is not None
        ]
        found.sort(key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]
        return found

    def verdict(self, model: SemanticModel, node: ast.AST, ctx: RuleContext) -> Verdict | None:
        what = _what(node, model.module)
        guard = model.rank_guard(node)
        if what is None or guard is None:
            return None
        trainers = trainers_running(model, node)
        if trainers is None or _after_spawn_or_before_fit(model, node, trainers):
            return None
        certainty = combined([trainer_processes(model, t, divided_ranks(guard)) for t in trainers])
        if certainty is None:
            return None
        return Verdict(self.code, model.span(node), self._finding(model, node, what, describe_guard(guard), certainty))

    def _finding(self, model: SemanticModel, node: ast.AST, what: str, where: str, certainty: Certainty) -> Finding:
        runs = (
            "with several processes"
            if certainty is Certainty.CERTAIN
            else "when the Trainer runs several processes, which this code can choose,"
        )
        message = (
            f"{what}, but {where}; {runs} the other ranks hang until the process-group timeout "
            "(30 minutes by default) or crash at their next collective. Call it on every rank "
            "(keep only the printing or writing under the guard)."
        )
        return Finding(
            code=self.code,
            severity=resolve_severity(certainty),
            message=message,
            span=model.span(node),
            url=self.url,
            certainty=certainty,
        )
