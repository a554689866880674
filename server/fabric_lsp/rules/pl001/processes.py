"""How many processes the Trainers that run a site start: the one place PL001 decides it, from
the Trainer's configurations (:meth:`~fabric_lsp.engine.semantic.model.SemanticModel.trainer_scenarios`:
one per path and kind of machine, resolved by the Trainer's connector).

Several processes are certain where every configuration that does not raise runs several
(``num_nodes=2``, ``devices=2`` on each machine the accelerator means); possible where some do
(``devices="auto"``: one CPU process, eight on a CUDA machine, or a known configuration among
others not known: an option's default ``devices=2``); nothing where every known one runs one
process (an argument the evaluator cannot follow, an assumed value, a Trainer known only by its
type decide nothing), as FAB002 does for a Fabric.
"""

from __future__ import annotations

from fabric_lsp import facts
from fabric_lsp.engine.findings import Certainty
from fabric_lsp.engine.lightning.configurations import Scenario
from fabric_lsp.engine.lightning.connector import Launcher, Outcome
from fabric_lsp.engine.python.values import TrainerInst
from fabric_lsp.engine.semantic.model import SemanticModel


def trainer_processes(model: SemanticModel, trainer: TrainerInst, divided: str = "global") -> Certainty | None:
    """CERTAIN: several processes on every configuration of ``trainer`` that the guard tells apart
    (``divided``: all of them, those of one node for a ``local_rank`` test, one per node for a
    ``node_rank`` test); POSSIBLE: on some; None: one, or not known."""
    runs = _runs(model, trainer)
    if runs is None:
        return _visibly_several(model, trainer, divided)
    several = [s for s in runs if s.outcome is not None and _apart(s.outcome, divided) >= 2]
    if not several:
        return None
    return Certainty.CERTAIN if len(several) == len(runs) else Certainty.POSSIBLE


def _apart(outcome: Outcome, divided: str) -> int:
    """How many processes a test of ``divided`` ranks tells apart."""
    if divided == "local":
        return outcome.num_processes
    if divided == "node":
        return outcome.world_size // max(outcome.num_processes, 1)
    return outcome.world_size


def _visibly_several(model: SemanticModel, trainer: TrainerInst, divided: str) -> Certainty | None:
    """Where some configuration is not known (``devices=args.devices``): POSSIBLE when one the code
    visibly chooses — every argument known, none assumed (the option's default ``2``) — runs
    several processes; else nothing."""
    known = [s for s in _running(model, trainer) if s.outcome is not None and not s.assumed]
    return Certainty.POSSIBLE if any(s.outcome is not None and _apart(s.outcome, divided) >= 2 for s in known) else None


def may_spawn(model: SemanticModel, trainer: TrainerInst) -> bool:
    """Whether some configuration of ``trainer`` starts its processes by spawning/forking (or is
    not known): after ``fit`` only the launching process then runs the rest of the script."""
    runs = _running(model, trainer)
    return trainer.args is None or not runs or any(s.outcome is None or _spawns(s.outcome.launcher) for s in runs)


def _spawns(launcher: Launcher | None) -> bool:
    return launcher is not None and launcher.value in facts.FUNCTION_LAUNCHERS


def _running(model: SemanticModel, trainer: TrainerInst) -> list[Scenario]:
    """The configurations of ``trainer`` that do not raise (those not known included); none for a
    Trainer known only by its type."""
    if trainer.args is None:
        return []
    return [s for s in model.trainer_scenarios(trainer) if s.outcome is None or s.outcome.error is None]


def _runs(model: SemanticModel, trainer: TrainerInst) -> list[Scenario] | None:
    """The configurations of ``trainer`` that do not raise; None where one is not known."""
    runs = _running(model, trainer)
    if not runs or any(s.outcome is None or s.assumed for s in runs):
        return None
    return runs


def combined(certainties: list[Certainty | None]) -> Certainty | None:
    """Every Trainer several processes: CERTAIN; some (or some possibly): POSSIBLE; none: None.
    An unknown Trainer among certain ones makes the whole possible."""
    if not certainties or all(c is None for c in certainties):
        return None
    if all(c is Certainty.CERTAIN for c in certainties):
        return Certainty.CERTAIN
    return Certainty.POSSIBLE
