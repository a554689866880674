"""What the Trainer rules say about the entry points (``trainer.fit(model)`` …) that run a class."""

from __future__ import annotations

from fabric_lsp.engine.findings import Related
from fabric_lsp.engine.program.lightning_modules import EntryPoint
from fabric_lsp.engine.semantic.model import SemanticModel


def entry_point_related(model: SemanticModel, e: EntryPoint) -> Related:
    """The entry-point call, as related information of a finding in ``model``'s document."""
    path = None if e.module is model.module else e.module.path
    return Related(f"`Trainer.{e.method}` runs it here", e.module.span(e.call), path)
