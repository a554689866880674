"""FAB005: DeepSpeed's contract — calls that DeepSpeed under Fabric does not support."""

from fabric_lsp.rules.fab005.rule import FAB005

__all__ = ["FAB005"]
