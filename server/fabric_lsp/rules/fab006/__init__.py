"""FAB006: a checkpoint call that fails at the first save or load."""

from fabric_lsp.rules.fab006.rule import FAB006

__all__ = ["FAB006"]
