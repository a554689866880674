"""The cyclic garbage collector, paused where a burst of allocations makes nothing it could free.

Its own module, importing nothing of fabric-lsp: a process pauses it for each analysis
(:class:`~fabric_lsp.engine.analyzer.Analyzer`), and while it imports the engine
(:func:`~fabric_lsp.documents.pool.import_preload`), before the engine is imported.
"""

from __future__ import annotations

import contextlib
import gc


@contextlib.contextmanager
def gc_paused(freeze: bool = False):
    """Pause the cyclic garbage collector for one analysis, or one import. Parsing a big file
    allocates ~100 AST objects a line and triggers many collections that find nothing to free (the
    analysis makes no cycles that must be collected before it returns): 40-55 % of a large parse.
    Importing the engine makes ~17,000 objects that live as long as the process, and no garbage.
    ``freeze`` (a process that makes one run, or forks next): what outlives the block — the
    workspace's parsed modules and what is known of them, the engine — stays to the end of the
    run, and the collector stops scanning it (``gc.freeze``): 15-20 % of a check, spent scanning
    them again and again."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if was_enabled:
            gc.enable()
