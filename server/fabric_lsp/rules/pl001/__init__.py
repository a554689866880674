"""PL001: a Trainer-side collective reached on some ranks only."""

from fabric_lsp.rules.pl001.rule import PL001

__all__ = ["PL001"]
