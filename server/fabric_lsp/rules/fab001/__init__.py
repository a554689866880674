"""FAB001: model and optimizer set up separately under DeepSpeed or XLA.

``rule.py`` holds the check, documentation and examples; ``fix.py`` plans the joint-setup
rewrite; ``guards.py`` narrows the strategy choices by the tests that guard a call;
``explain.py`` writes the hover text.
"""

from fabric_lsp.rules.fab001.rule import FAB001

__all__ = ["FAB001"]
