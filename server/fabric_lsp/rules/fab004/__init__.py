"""FAB004: ``loss.backward()`` where the Fabric's precision or strategy requires ``fabric.backward(loss)``."""

from fabric_lsp.rules.fab004.rule import FAB004

__all__ = ["FAB004"]
