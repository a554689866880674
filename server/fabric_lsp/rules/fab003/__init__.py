"""FAB003: a method other than ``forward`` called on a set-up model whose strategy wraps it, where
the method runs a module and is not marked with ``mark_forward_method``."""

from fabric_lsp.rules.fab003.rule import FAB003

__all__ = ["FAB003"]
