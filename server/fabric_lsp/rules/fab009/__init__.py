"""FAB009: joint ``fabric.setup(model, optimizer)`` where the strategy needs separate setup."""

from fabric_lsp.rules.fab009.rule import FAB009

__all__ = ["FAB009"]
