"""Hover text lives with its rule (``fabric_lsp.rules.fab001.explain``). ``engine/analyzer.py``
imports it from here until the rule registry hands hover to the rules."""

from fabric_lsp.rules.fab001.explain import explain

__all__ = ["explain"]
