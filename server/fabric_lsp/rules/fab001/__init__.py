"""FAB001: model and optimizer set up separately under DeepSpeed or XLA.

``rule.py`` holds the check; ``docs.py`` the documentation and examples; ``fix.py`` plans the
joint-setup rewrite; ``explain.py`` writes the hover text.
"""

from fabric_lsp.rules.fab001.rule import FAB001

__all__ = ["FAB001"]
