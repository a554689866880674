"""PL004: Lightning 1.x API that Lightning 2.x removed and now rejects at run time."""

from __future__ import annotations

import ast
import difflib
import re

from fabric_lsp import facts
from fabric_lsp.engine.findings import (
    Certainty,
    Explanation,
    Located,
    Pos,
    Related,
    Span,
    Verdict,
)
from fabric_lsp.engine.lightning.fabric_args import pytorch_class_of
from fabric_lsp.engine.python.astwalk import walk
from fabric_lsp.engine.python.values import ClassRef, Instance, QualRef
from fabric_lsp.engine.rule import Rule, RuleContext
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.rules.entry_points import entry_point_related, how_run
from fabric_lsp.rules.expected import caught
from fabric_lsp.rules.pl004.docs import DOC, INVALID, SUMMARY, VALID
from fabric_lsp.rules.pl004.fix import gpus_fix, hook_fix, load_fix
from fabric_lsp.rules.prefilters import PREFILTERS

_VALIDATOR = "lightning/pytorch/trainer/configuration_validator.py"
_HOOK_LINES = {"training_epoch_end": ":76-82", "validation_epoch_end": ":83-89", "test_epoch_end": ":108-116"}
_TRAINER_INIT = "lightning/pytorch/trainer/trainer.py:91"
_TRAINER_CLASS = "lightning/pytorch/trainer/trainer.py:89"
#: the line of ``Trainer.__init__`` in the last patch release of each 1.x minor release since the
#: first that lacks one of the flags (1.5), in pytorch-lightning's wheels (behind
#: ``@_defaults_from_env_vars``, which passes every keyword on: no ``**kwargs`` either)
_TRAINER_INIT_1X: dict[tuple[int, ...], int] = {(1, 5): 118, (1, 6): 129, (1, 7): 137, (1, 8): 119, (1, 9): 120}
_LOAD_WHERE = "lightning/pytorch/utilities/model_helpers.py:126"
_HPARAMS_WHERE = "lightning/pytorch/core/mixins/hparams_mixin.py:166-167"
_CHECKED_BY = {
    h: tuple(m for m, hooks in facts.TRAINER_ENTRY_POINTS.items() if h in hooks) for h in facts.REMOVED_EPOCH_END_HOOKS
}


class PL004(Rule):
    code = "PL004"
    name = "removed-lightning-api"
    summary = SUMMARY
    doc = DOC
    valid = VALID
    invalid = INVALID
    fixable = True
    prefilter = PREFILTERS["PL004"]

    def sites(self, model: SemanticModel) -> list[ast.AST]:
        found: list[ast.AST] = [
            *self._hook_sites(model),
            *_trainer_calls(model),
            *model.method_calls("load_from_checkpoint"),
            *(c for name in facts.REMOVED_TRAINER_CLASSMETHODS for c in model.method_calls(name)),
        ]
        found += _hparams_assignments(model)
        found.sort(key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]
        return found

    def _hook_sites(self, model: SemanticModel) -> list[ast.AST]:
        if not any(h in model.module.text for h in facts.REMOVED_EPOCH_END_HOOKS):
            return []
        out: list[ast.AST] = []
        for lc in model.lightning_classes(frozenset(facts.REMOVED_EPOCH_END_HOOKS)):
            if lc.base == facts.LIGHTNING_MODULE_CLASS:
                out += [
                    item
                    for item in lc.cls.node.body
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and item.name in facts.REMOVED_EPOCH_END_HOOKS
                ]
        return out

    def verdict(self, model: SemanticModel, site: ast.AST, ctx: RuleContext) -> Verdict | None:
        if isinstance(site, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return self._hook(model, site, ctx)
        if isinstance(site, ast.Assign):
            return self._hparams(model, site, ctx)
        assert isinstance(site, ast.Call)
        if isinstance(site.func, ast.Attribute) and site.func.attr == "load_from_checkpoint":
            return self._load(model, site, ctx)
        if isinstance(site.func, ast.Attribute) and site.func.attr in facts.REMOVED_TRAINER_CLASSMETHODS:
            return self._classmethod(model, site, ctx)
        return self._trainer(model, site, ctx)

    # -- the epoch-end hooks -----------------------------------------------------------------------
    def _hook(
        self, model: SemanticModel, func: ast.FunctionDef | ast.AsyncFunctionDef, ctx: RuleContext
    ) -> Verdict | None:
        if not facts.has_feature("removed_1x_api", ctx.lightning_version):
            return None
        owner = model.module.parent_of(func)
        if not isinstance(owner, ast.ClassDef):
            return None
        cls = ClassRef(owner, model.module)
        checked_by = _CHECKED_BY[func.name]
        run = how_run(model, cls, checked_by)
        if run.certainty is None:
            return Verdict(self.code, model.span(func), None, _explain(run.why_not.format(what=f"`{func.name}`")))
        replacement = facts.REMOVED_EPOCH_END_HOOKS[func.name]
        raised = f"NotImplementedError: Support for `{func.name}` has been removed in v2.0.0"
        where = f"{_VALIDATOR}{_HOOK_LINES[func.name]}"
        if run.certainty is Certainty.CERTAIN:
            e = run.entries[0]
            why = f"`{e.module.segment(e.call.func)}(...)` runs `{cls.name}`, and `Trainer.{e.method}` raises {raised}"
        elif run.entries:
            why = f"`Trainer.{run.entries[0].method}` may run `{cls.name}` (on some paths), and raises {raised}"
        else:
            why = f"{_methods(checked_by)} raises {raised} when it runs `{cls.name}` (no such call on it is seen)"
        certainty = run.certainty
        message = f"`{cls.name}` defines `{func.name}`, removed in Lightning 2.0: {why} ({where}). Use `{replacement}` and keep the outputs in an attribute."
        fix = hook_fix(model, cls, func, replacement)
        if fix is None:
            message += " No automatic fix: the hook uses its `outputs` (or its name is used elsewhere)."
        span = _def_name_span(model, func)
        related = tuple(entry_point_related(model, e) for e in run.entries[:3])
        finding = self.finding(certainty, message, span, related, fix, where)
        return Verdict(self.code, span, finding, _explain(message))

    # -- Trainer(...) keywords -----------------------------------------------------------------------
    def _trainer(self, model: SemanticModel, call: ast.Call, ctx: RuleContext) -> Verdict | None:
        rejected = _rejected_keywords(call, ctx.lightning_version)
        if (
            not rejected
            or caught(model, call, "TypeError")
            or not _certainly_trainer(model, call, {k.arg for k in rejected if k.arg})
        ):
            return None
        rejected = _not_taken_by_source(model, call, rejected)
        if not rejected:
            return None
        names = [k.arg for k in rejected if k.arg]
        parts = [_rejected_part(name) for name in names]
        # a removed flag fails on every release since its removal; another keyword only up to the
        # release whose signature the rules know (a later Lightning may take it: its own repository's tests do)
        removed = any(n in facts.REMOVED_TRAINER_ARGUMENTS for n in names)
        verb = "raises" if removed else f"raises (Lightning {_known_signature()}; a later release may take it)"
        head = f"`{model.segment(call.func)}(...)` {verb} TypeError: `Trainer.__init__` takes no keyword {', '.join(parts)}"
        where, how = _trainer_init(ctx.lightning_version)
        message = f"{head} ({where}: {how})."
        fix = gpus_fix(model, call) if "gpus" in names else None
        span = model.span(rejected[0])
        certainty = Certainty.CERTAIN if removed else Certainty.POSSIBLE
        finding = self.finding(certainty, message, span, (), fix, where)
        return Verdict(self.code, model.span(call), finding, _explain(message))

    # -- Trainer.add_argparse_args and the other argparse classmethods ------------------------------
    def _classmethod(self, model: SemanticModel, call: ast.Call, ctx: RuleContext) -> Verdict | None:
        assert isinstance(call.func, ast.Attribute)
        name = call.func.attr
        if not facts.has_feature("removed_1x_api", ctx.lightning_version) or caught(model, call, "AttributeError"):
            return None
        receivers = model.values(call.func.value)
        if not receivers or not all(_lightning_trainer_class(model, v, name) for v in receivers):
            return None
        receiver = model.segment(call.func.value)
        message = (
            f"`{receiver}.{name}(...)` raises AttributeError: `Trainer.{name}` was removed in Lightning 2.0 "
            f"({_TRAINER_CLASS}: the class has no such attribute). Use `LightningCLI`, or add the arguments to "
            "the parser yourself and pass them to `Trainer(...)`."
        )
        finding = self.finding(Certainty.CERTAIN, message, model.span(call.func), (), None, _TRAINER_CLASS)
        return Verdict(self.code, model.span(call), finding, _explain(message))

    # -- load_from_checkpoint on an instance ---------------------------------------------------------
    def _load(self, model: SemanticModel, call: ast.Call, ctx: RuleContext) -> Verdict | None:
        if not facts.has_feature("restricted_load_from_checkpoint", ctx.lightning_version):
            return None
        assert isinstance(call.func, ast.Attribute)
        if caught(model, call, "TypeError"):
            return None
        values = model.values(call.func.value)
        # a project class that defines its own `load_from_checkpoint` replaced Lightning's restricted one
        instances = [
            v
            for v in values
            if isinstance(v, Instance)
            and _is_module_or_datamodule(model, v.cls)
            and not model.defines_attribute(v.cls, "load_from_checkpoint")
        ]
        if not instances:
            return None
        classes = {id(v.cls.node): v.cls for v in instances}
        every = len(instances) == len(values)
        name = next(iter(classes.values())).name
        receiver = model.segment(call.func.value)
        message = (
            f"`{receiver}.load_from_checkpoint(...)` is called on an instance of `{name}`: Lightning raises TypeError: "
            f"The classmethod `{name}.load_from_checkpoint` cannot be called on an instance ({_LOAD_WHERE}). "
            "Call it on the class and use the model it returns."
        )
        if not every:
            message = message.replace("is called on an instance", "may be called on an instance", 1)
        param = _receiver_parameter(model, call)
        related: tuple[Related, ...] = ()
        if param is not None:
            # the callers choose the receiver: no rewrite here is right for every caller (`Cls.` breaks
            # one that passes another class, `type(x).` one that passes the class)
            message += f" No automatic fix: `{receiver}` is a parameter of `{param}`; call it on the class where the instance is made."
            related = _constructions(model, instances)
            fix = None
        else:
            fix = load_fix(model, call, next(iter(classes.values()))) if every and len(classes) == 1 else None
        certainty = Certainty.CERTAIN if every else Certainty.POSSIBLE
        finding = self.finding(certainty, message, model.span(call), related, fix, _LOAD_WHERE)
        return Verdict(self.code, model.span(call), finding, _explain(message))

    # -- self.hparams = ... ----------------------------------------------------------------------------
    def _hparams(self, model: SemanticModel, stmt: ast.Assign, ctx: RuleContext) -> Verdict | None:
        if not facts.has_feature("no_hparams_setter", ctx.lightning_version):
            return None
        owner = _owner_class(model, stmt)
        if owner is None or caught(model, stmt, "AttributeError"):
            return None
        cls = ClassRef(owner, model.module)
        if not _is_module_or_datamodule(model, cls) or model.defines_attribute(cls, "hparams"):
            return None
        message = (
            f"`{model.segment(stmt.targets[0])} = ...` in `{cls.name}` raises AttributeError: `hparams` is a property "
            f"without a setter ({_HPARAMS_WHERE}). Call `self.save_hyperparameters(...)` instead."
        )
        finding = self.finding(Certainty.CERTAIN, message, model.span(stmt), (), None, _HPARAMS_WHERE)
        return Verdict(self.code, model.span(stmt), finding, _explain(message))


def _receiver_parameter(model: SemanticModel, call: ast.Call) -> str | None:
    """The name of the function whose parameter the receiver of ``call`` is (a plain name, not
    rebound in the function before the call; a method's ``self`` does not count)."""
    assert isinstance(call.func, ast.Attribute)
    receiver = call.func.value
    if not isinstance(receiver, ast.Name):
        return None
    func = model.module.parent_of(call)
    while func is not None and not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        func = model.module.parent_of(func)
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)]
    if receiver.id not in params or (params[0] == receiver.id and _owner_class(model, call) is not None):
        return None
    rebound = any(
        isinstance(n, ast.Name) and n.id == receiver.id and isinstance(n.ctx, ast.Store) and n.lineno < call.lineno
        for stmt in func.body
        for n in walk(stmt)
    )
    return None if rebound else func.name


def _constructions(model: SemanticModel, instances: list[Instance]) -> tuple[Related, ...]:
    """Where the instances that reach the receiver are made (the callers' arguments)."""
    out: list[Related] = []
    for v in instances:
        if v.call is None or v.ctx is None or len(out) == 3:
            continue
        m = v.ctx.module
        out.append(
            Related(
                f"an instance of `{v.cls.name}` is made here", m.span(v.call), None if m is model.module else m.path
            )
        )
    return tuple(out)


def _methods(methods: tuple[str, ...]) -> str:
    return " or ".join(f"`trainer.{m}`" for m in methods)


def _explain(text: str) -> Explanation:
    return Explanation(f"**Removed Lightning API** — {text}", (Located(text),), ())


def _def_name_span(model: SemanticModel, func: ast.AST) -> Span:
    """The span of the ``def``'s name."""
    start = model.module.lines.node_start(func)
    line = model.module.lines.line(start.line)
    m = re.compile(r"(?:async\s+)?def\s+(\w+)").match(line, start.col)
    if m is None:
        return model.span(func)
    return Span(Pos(start.line, m.start(1)), Pos(start.line, m.end(1)))


def _is_module_or_datamodule(model: SemanticModel, cls: ClassRef) -> bool:
    lc = model.lightning_class(cls)
    return lc is not None and lc.base in (facts.LIGHTNING_MODULE_CLASS, facts.DATA_MODULE_CLASS)


def _owner_class(model: SemanticModel, node: ast.AST) -> ast.ClassDef | None:
    """The class whose method holds ``node`` (its ``self`` being the first parameter)."""
    cur = model.module.parent_of(node)
    while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef)):
        cur = model.module.parent_of(cur)
    owner = model.module.parent_of(cur) if cur is not None else None
    return owner if isinstance(owner, ast.ClassDef) else None


# -- sites -------------------------------------------------------------------------------------------
def _trainer_calls(model: SemanticModel) -> list[ast.Call]:
    """The calls of a callee named like a Trainer (``Trainer``, ``pl.Trainer``, ``MyTrainer``)
    whose keywords include one ``Trainer.__init__`` does not take (a cheap syntactic pass; the
    callee is checked in the verdict)."""

    def compute() -> list[ast.Call]:
        if model.module.tree is None or "Trainer" not in model.module.text:
            return []
        known = set(facts.TRAINER_PARAMETERS)
        calls = model.module.calls_named_like(lambda name: "trainer" in name.lower())
        return [c for c in calls if any(k.arg is not None and k.arg not in known for k in c.keywords)]

    return list(model.asked_once(("pl004_trainer_calls",), compute))


def _hparams_assignments(model: SemanticModel) -> list[ast.Assign]:
    if "hparams" not in model.module.text or model.module.tree is None:
        return []
    out: list[ast.Assign] = []
    for node in model.module.classes():
        for item in node.body:
            if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) or not item.args.args:
                continue
            me = item.args.args[0].arg
            out += [
                n
                for n in walk(item)
                if isinstance(n, ast.Assign)
                and len(n.targets) == 1
                and _is_self_hparams(n.targets[0], me)
                and _owner_class(model, n) is node
            ]
    return out


def _is_self_hparams(node: ast.AST, me: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "hparams"
        and isinstance(node.value, ast.Name)
        and node.value.id == me
    )


def _known_signature() -> str:
    return ".".join(str(n) for n in facts.TRAINER_PARAMETERS_VERSION)


def _trainer_init(version: str) -> tuple[str, str]:
    """Where ``Trainer.__init__`` of ``version`` is, and why it takes no other keyword."""
    release = facts.version_tuple(version or facts.LATEST_LIGHTNING)[:2]
    line = _TRAINER_INIT_1X.get(release)
    if line is None:
        return _TRAINER_INIT, "keyword-only, no `**kwargs`"
    return (
        f"pytorch_lightning/trainer/trainer.py:{line} ({release[0]}.{release[1]})",
        "no such parameter, no `**kwargs`",
    )


def _rejected_part(name: str) -> str:
    """```gpus` (removed in 2.0; use ...)`` for a removed flag; for another keyword, the
    parameter or removed flag its spelling is closest to (```max_epoch` (did you mean
    `max_epochs`?)``: a suggestion, never a fix)."""
    removed = facts.REMOVED_TRAINER_ARGUMENTS.get(name)
    if removed is not None:
        return f"`{name}` ({_removed(removed)})"
    close = difflib.get_close_matches(name, [*facts.TRAINER_PARAMETERS, *facts.REMOVED_TRAINER_ARGUMENTS], 1, 0.8)
    if not close:
        return f"`{name}`"
    meant = facts.REMOVED_TRAINER_ARGUMENTS.get(close[0])
    return f"`{name}` (did you mean `{close[0]}`{f', {_removed(meant)}' if meant else ''}?)"


def _removed(removed: facts.RemovedArgument) -> str:
    return f"removed in {'.'.join(str(n) for n in removed.since)}; use {removed.instead}"


def _rejected_keywords(call: ast.Call, version: str) -> list[ast.keyword]:
    """The keywords of ``call`` that ``Trainer.__init__`` of ``version`` does not take, as far as
    this rule knows the signature: all of 2.6's other keywords; for an older release, the flags
    removed in it or before (``facts.REMOVED_TRAINER_ARGUMENTS``: a 1.8 project's
    ``progress_bar_refresh_rate``, removed in 1.7)."""
    release = facts.version_tuple(version or facts.LATEST_LIGHTNING)[:2]
    latest = release >= facts.TRAINER_PARAMETERS_VERSION
    known = set(facts.TRAINER_PARAMETERS)
    out = []
    for k in call.keywords:
        if k.arg is None or k.arg in known:
            continue
        removed = facts.REMOVED_TRAINER_ARGUMENTS.get(k.arg)
        if latest or (removed is not None and release >= removed.since):
            out.append(k)
    return out


def _not_taken_by_source(model: SemanticModel, call: ast.Call, rejected: list[ast.keyword]) -> list[ast.keyword]:
    """``rejected`` less the keywords the Trainer source the analysed code runs takes (the
    project's own Lightning tree, or the analysed environment's install, may be newer than the
    release the facts describe). A project subclass may derive from either package's Trainer."""
    packages = {v.qualname.split(".")[0] for v in model.values(call.func) if isinstance(v, QualRef)} or set(
        facts.TRAINER_MODULES
    )
    taken: set[str] = set()
    for package in sorted(packages):
        taken |= model.trainer_keywords(package) or set()
    return [k for k in rejected if k.arg not in taken]


def _trainer_class(model: SemanticModel, v: object) -> bool:
    """``v`` is Lightning's ``Trainer`` class (any import path) or a user subclass of it."""
    if isinstance(v, QualRef):
        return facts.is_trainer_class(v.qualname)
    return isinstance(v, ClassRef) and pytorch_class_of(model.inference, v) == facts.TRAINER_CLASS


def _lightning_trainer_class(model: SemanticModel, v: object, name: str) -> bool:
    """``v`` is Lightning's ``Trainer`` class, or a user subclass of it that does not define ``name``."""
    return _trainer_class(model, v) and not (isinstance(v, ClassRef) and model.defines_attribute(v, name))


def _certainly_trainer(model: SemanticModel, call: ast.Call, keywords: set[str]) -> bool:
    """Every alternative of the callee is Lightning's Trainer, or a user subclass whose keywords
    reach ``Trainer.__init__`` unchanged (and that takes none of ``keywords`` itself)."""
    callees = model.values(call.func)
    return bool(callees) and all(
        _trainer_class(model, v) and (not isinstance(v, ClassRef) or model.trainer_init_forwards(v, keywords) is True)
        for v in callees
    )
