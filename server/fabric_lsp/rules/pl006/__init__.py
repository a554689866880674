"""PL006: a ``Trainer(...)`` configuration Lightning rejects when the Trainer is built."""

from fabric_lsp.rules.pl006.rule import PL006

__all__ = ["PL006"]
