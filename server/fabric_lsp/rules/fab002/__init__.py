"""FAB002: a collective (Fabric's, torch.distributed's, a sharded model's forward) reached on some ranks only."""

from fabric_lsp.rules.fab002.rule import FAB002

__all__ = ["FAB002"]
