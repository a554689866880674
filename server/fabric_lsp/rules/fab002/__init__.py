"""FAB002: a Fabric collective reached on some ranks only."""

from fabric_lsp.rules.fab002.rule import FAB002

__all__ = ["FAB002"]
