"""PL002: ``ckpt_path="best"`` where the Trainer has no best checkpoint to load."""

from fabric_lsp.rules.pl002.rule import PL002

__all__ = ["PL002"]
