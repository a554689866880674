"""FAB008: an impossible ``Fabric(...)`` configuration."""

from fabric_lsp.rules.fab008.rule import FAB008

__all__ = ["FAB008"]
