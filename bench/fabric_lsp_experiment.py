"""fabric-lsp with the prototypes of bench/experiments.py (for ``run.py --experiments`` only).

FABRIC_LSP_BENCH_EXPERIMENTS is a comma list of ``gc`` (pause the GC during an analysis) and
``repair`` (parso-free repair of a half-typed line); the default is both.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import experiments  # noqa: E402

wanted = set((os.environ.get("FABRIC_LSP_BENCH_EXPERIMENTS") or "gc,repair").split(","))
if "gc" in wanted:
    experiments.install_gc_pause()
if "repair" in wanted:
    experiments.install_fast_repair()

from fabric_lsp.cli.main import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["serve"]))
