"""fabric-lsp's own source files: what a result kept from an earlier run was computed by (the
cache's entries, a check's run record are not reused once one of them changed)."""

from __future__ import annotations

import os

PACKAGE = os.path.dirname(os.path.abspath(__file__))


def own_files() -> list[str]:
    """Every ``.py`` file of the ``fabric_lsp`` package, in sorted walk order."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(PACKAGE):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        out += [os.path.join(dirpath, name) for name in sorted(filenames) if name.endswith(".py")]
    return out
