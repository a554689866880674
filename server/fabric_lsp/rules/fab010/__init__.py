"""FAB010: a batch-job script that disagrees with the ``Fabric(...)`` it launches."""

from fabric_lsp.rules.fab010.rule import FAB010

__all__ = ["FAB010"]
