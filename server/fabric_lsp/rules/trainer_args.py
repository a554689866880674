"""A ``Trainer(...)``'s arguments as the evaluator gives them, one path at a time (for the PL rules)."""

from __future__ import annotations

from fabric_lsp.engine.python import paths
from fabric_lsp.engine.python.values import Const, TrainerInst
from fabric_lsp.engine.semantic.model import SemanticModel


def argument_values(
    model: SemanticModel, inst: TrainerInst, name: str, default: object
) -> list[tuple[object, frozenset]] | None:
    """The values of the Trainer argument ``name`` with their paths: ``default`` where it is not
    given; None where some value is not a constant (or ``**kwargs`` may give it)."""
    assert inst.args is not None
    arg = inst.args.get(name)
    if arg is None:
        return None if inst.args.open else [(default, paths.EMPTY)]
    expr, ctx = arg
    inf = model.inference
    values = inf.bounded(lambda: inf.reached(inf.ev(expr, ctx), ctx.module.stmt_of(expr), ctx), None)
    if not values or not all(isinstance(v, Const) for v in values):
        return None
    return [(v.value, paths.path_of(v)) for v in values if isinstance(v, Const)]
