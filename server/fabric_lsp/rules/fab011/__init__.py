"""FAB011: a strategy whose launcher cannot run in a notebook."""

from fabric_lsp.rules.fab011.rule import FAB011

__all__ = ["FAB011"]
