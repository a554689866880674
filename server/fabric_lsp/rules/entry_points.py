"""What the Trainer rules say about the entry points (``trainer.fit(model)`` …) that run a class."""

from __future__ import annotations

from dataclasses import dataclass

from fabric_lsp import facts
from fabric_lsp.engine.findings import Certainty, Related
from fabric_lsp.engine.program.lightning_modules import EntryPoint, RunModel
from fabric_lsp.engine.python.values import ClassRef
from fabric_lsp.engine.semantic.model import SemanticModel


def entry_point_related(model: SemanticModel, e: EntryPoint) -> Related:
    """The entry-point call, as related information of a finding in ``model``'s document."""
    path = None if e.module is model.module else e.module.path
    if e.cli:
        when = "" if not e.conditional else f" when its command line says `{e.method}`"
        return Related(f"this `LightningCLI` runs `Trainer.{e.method}` on it{when}", e.module.span(e.call), path)
    return Related(f"`Trainer.{e.method}` runs it here", e.module.span(e.call), path)


def runs_only_others(model: SemanticModel, cls: ClassRef) -> bool:
    """No entry point of the workspace runs ``cls``, while its own module runs LightningModules
    through entry points whose models are all known and all of other classes (a test module's
    helper model the tests never fit, a base next to the class a script fits): the class is
    visibly not what this code runs, not merely unseen."""
    if cls.module is not model.module or model.entry_points(cls):
        return False
    calls = [c for method in facts.TRAINER_ENTRY_POINTS for c in model.method_calls(method)]
    runs_some = False
    for call in calls:
        classes, unknown = model.entry_point_classes(call)
        if unknown:
            return False
        runs_some = runs_some or bool(classes)
    return runs_some


def declared_runs_others(model: SemanticModel, cls: ClassRef) -> list[RunModel] | None:
    """No entry point of the workspace runs ``cls``, and what each one runs is known, at least one
    of them by the type its model is declared with (``system: BaseSystem = find(name)(...)``: the
    code says which family of classes it trains): the models run, where none of them may be an
    instance of ``cls`` (it is not one of the declared classes, nor their base, nor either's
    subclass); else None. A workspace whose entry points all fit particular classes (a library's
    examples and tests) says nothing of the classes its users fit: there it stays None."""
    runs = model.workspace_runs()
    if not runs or not any(r.declared for r in runs):
        return None
    if any(model.may_run(r, cls) for r in runs):
        return None
    return runs


@dataclass(frozen=True)
class HowRun:
    """How certainly an entry point of ``methods`` runs a class: ``certainty`` None where the
    entry points seen never do (``why_not`` says why, with ``{what}`` for what is checked);
    ``entries`` the entry points to cite (the certain ones where there are)."""

    certainty: Certainty | None
    entries: tuple[EntryPoint, ...] = ()
    why_not: str = ""


def how_run(model: SemanticModel, cls: ClassRef, methods: tuple[str, ...]) -> HowRun:
    """CERTAIN where an entry point of ``methods`` (``fit``…) certainly runs an instance of
    ``cls`` on every path of its function; POSSIBLE where one may, or where the workspace shows
    no entry point of the class at all (a LightningModule is written to be run); None where the
    entry points seen on it are all of other methods, or the class is visibly not run here (its
    module runs only others; or it is of the other import style than every Trainer the workspace
    runs: ``pytorch_lightning`` code vendored into a ``lightning.pytorch`` project, which those
    Trainers refuse)."""
    if runs_only_others(model, cls):
        return HowRun(None, why_not=f"no call seen runs `{cls.name}`; its module runs other LightningModules")
    seen = model.entry_points(cls)
    why_not = None if seen else _not_run(model, cls)
    if why_not is not None:
        return HowRun(None, why_not=why_not)
    running = [e for e in seen if e.method in methods]
    if seen and not running:
        names = " or ".join(f"`trainer.{m}`" for m in methods)
        return HowRun(None, why_not=f"{{what}} is checked only by {names}, which no call seen runs on `{cls.name}`")
    certain = [e for e in running if e.every and not e.conditional]
    return HowRun(Certainty.CERTAIN if certain else Certainty.POSSIBLE, tuple(certain or running))


def _not_run(model: SemanticModel, cls: ClassRef) -> str | None:
    """Why ``cls``, which no entry point is seen to run, is visibly not run here (None: it may be):
    every Trainer of the workspace refuses it, or every entry point runs a known model it is not."""
    if model.refused_by_every_trainer(cls):
        return f"every Trainer the workspace runs is of the other import style than `{cls.name}`'s LightningModule (it refuses it)"
    others = declared_runs_others(model, cls)
    if others is None:
        return None
    names = ", ".join(f"`{n}`" for n in sorted({r.cls.name for r in others if r.declared}))
    return f"no entry point of the workspace runs `{cls.name}`: what they run is known, declared as {names} (of which `{cls.name}` is none)"
