"""PL004: Lightning 1.x API that Lightning 2.x removed."""

from fabric_lsp.rules.pl004.rule import PL004

__all__ = ["PL004"]
