#!/usr/bin/env python
"""The server's cold ``workspace/diagnostic`` next to ``fabric-lsp check --no-cache``, wall and CPU.

Each measurement runs in a fresh process of this script (``--one cli|server ROOT``) that makes
itself a child subreaper, so that every process started under it (the CLI's workers, the server's
worker processes, jedi's subprocesses) is reaped by it and counted in its children's CPU time,
even those that outlive the server. The two are run alternately, ``--runs`` times, each variant
of fabric-lsp (``--variant NAME=PYTHONPATH``) in turn, and every run's findings are compared:
the server's diagnostics must equal the CLI's findings (file, line, code, severity) on every
tree. Bytecode is written and read (PYTHONDONTWRITEBYTECODE dropped), as bench/realrepos.py does::

    .venv/bin/python bench/server_cold.py /work/trees/litgpt /work/trees/sheeprl --runs 3 \
        --variant before=/work/main/server --variant after=/work/wt-server/server
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "realcode"))
CACHE = ".fabric_lsp_cache"
PR_SET_CHILD_SUBREAPER = 36


def _reap_all() -> None:
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def one(kind: str, root: Path) -> dict:
    """Runs in its own process: one cold run, its wall time, its CPU time and its findings."""
    import parity  # the CLI's findings and the server's, as tests/realcode/parity.py compares them

    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    shutil.rmtree(root / CACHE, ignore_errors=True)
    t0 = time.perf_counter()
    if kind == "cli":
        findings = parity.cli_findings(root)
    else:
        findings = asyncio.run(parity.lsp_findings(root))
    wall = time.perf_counter() - t0
    _reap_all()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    shutil.rmtree(root / CACHE, ignore_errors=True)
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "findings": sorted(findings)}


def measure(kind: str, root: Path, pythonpath: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    env["PYTHONWARNINGS"] = "ignore"
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    load = os.getloadavg()[0]
    out = subprocess.run([sys.executable, __file__, "--one", kind, str(root)], env=env, capture_output=True, text=True, check=True).stdout
    return {"load": load, **json.loads(out)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("roots", nargs="*", type=Path)
    p.add_argument("--runs", type=int, default=2)
    p.add_argument("--variant", action="append", default=[], metavar="NAME=PYTHONPATH")
    p.add_argument("--only", choices=("cli", "server"), help="time only one of the two")
    p.add_argument("--json", metavar="FILE")
    p.add_argument("--one", nargs=2, metavar=("KIND", "ROOT"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one[0], Path(args.one[1]))))
        return 0
    variants = [tuple(v.split("=", 1)) for v in args.variant] or [("current", None)]
    for _, path in variants:  # bytecode compiled once, as an install leaves it
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(path or HERE.parent / "server") / "fabric_lsp")], check=False)
    kinds = [args.only] if args.only else ["cli", "server"]
    rows: dict = {}
    bad = 0
    for root in args.roots:
        for run in range(args.runs):
            for name, path in variants:
                cli = None
                for kind in kinds:
                    m = measure(kind, root, path)
                    rows.setdefault(root.name, {}).setdefault(name, {}).setdefault(kind, []).append({k: v for k, v in m.items() if k != "findings"})
                    print(f"{root.name:18} {name:8} {kind:6} run {run}: wall {m['wall']:6.2f} s  cpu {m['cpu']:6.2f} s  load {m['load']:.2f}  {len(m['findings'])} findings", flush=True)
                    if kind == "cli":
                        cli = m["findings"]
                    elif cli is not None and m["findings"] != cli:
                        bad += 1
                        diff = set(map(tuple, cli)) ^ set(map(tuple, m["findings"]))
                        print(f"  PARITY: {len(diff)} findings differ: {sorted(diff)[:10]}", flush=True)
    print()
    for tree, by_variant in rows.items():
        for name, by_kind in by_variant.items():
            best = {k: min(r["wall"] for r in v) for k, v in by_kind.items()}
            cpu = {k: min(r["cpu"] for r in v) for k, v in by_kind.items()}
            loads = [r["load"] for v in by_kind.values() for r in v]
            ratio = f"  ratio {best['server'] / best['cli']:.2f}" if len(best) == 2 else ""
            parts = "  ".join(f"{k} {best[k]:.2f} s (cpu {cpu[k]:.2f} s)" for k in best)
            print(f"{tree:18} {name:8} best of {args.runs}: {parts}{ratio}  load {min(loads):.2f}-{max(loads):.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    print(f"parity: {bad} runs where the server's findings differ from the CLI's")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
