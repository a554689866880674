"""PL005: ``ckpt_path="best"`` where the Trainer has no best checkpoint to load."""

from fabric_lsp.rules.pl005.rule import PL005

__all__ = ["PL005"]
