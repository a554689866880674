"""FAB007: ``launch()`` misuse."""

from fabric_lsp.rules.fab007.rule import FAB007

__all__ = ["FAB007"]
