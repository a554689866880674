"""PL003: the Trainer's optimisation contract (manual optimisation, several optimizers)."""

from fabric_lsp.rules.pl003.rule import PL003

__all__ = ["PL003"]
