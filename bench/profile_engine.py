#!/usr/bin/env python
"""Replay the benchmark's keystrokes through ``Analyzer.analyze`` in one process and profile it.

    bench/.venv-bench/bin/python bench/profile_engine.py --size 2000 --edits 200
    bench/.venv-bench/bin/python bench/profile_engine.py --size 10000 --edits 60 --pyinstrument

Runs with the bench venv's interpreter (pyinstrument lives there) and imports fabric-lsp from
``server/`` (the bench venv has the same pygls/lsprotocol/jedi as the project venv). Prints, for
every edit, whether the text parsed with ``ast.parse`` (clean) or went through the
error-recovering path, the analysis time per class, and where the time goes.
"""

from __future__ import annotations

import argparse
import ast
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "server"))
sys.path.insert(0, HERE)
# the project's own dependencies that the bench venv lacks (e.g. pathspec) come from the project venv,
# after the bench venv's packages (same jedi/parso/pygls versions)
sys.path.append(os.path.join(REPO, ".venv", "lib", f"python{sys.version_info[0]}.{sys.version_info[1]}", "site-packages"))

import contextlib

import gen  # noqa: E402


def pct(v, q):
    s = sorted(v)
    return s[max(0, min(len(s) - 1, int(round(q / 100 * len(s) + 0.5)) - 1))] if s else float("nan")


def insert(text_lines: list[str], line: int, col: int, key: str) -> None:
    cur = text_lines[line]
    new = cur[:col] + key + cur[col:]
    parts = new.split("\n")
    text_lines[line : line + 1] = parts


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--size", type=int, default=2000)
    p.add_argument("--plain", action="store_true", help="the file without Fabric code")
    p.add_argument("--edits", type=int, default=200)
    p.add_argument("--pyinstrument", action="store_true")
    p.add_argument("--phases", action="store_true", help="time parse/parso/repair/rules separately")
    p.add_argument("--gc", choices=("on", "off", "server-heap"), default="on",
                   help="off: gc.disable() around each analysis (what a server could do); server-heap: import the server first (its heap makes each collection dearer)")
    p.add_argument("--fast-repair", action="store_true",
                   help="prototype: on a SyntaxError, first blank the reported line(s) with `pass` and re-parse with ast; parso only if that fails")
    p.add_argument("--environment", default=os.environ.get("FABRIC_LSP_BENCH_VENV") or os.path.join(HERE, ".venv-bench"))
    args = p.parse_args()

    import gc

    if args.gc == "server-heap":
        import fabric_lsp.lsp.server  # noqa: F401
    from fabric_lsp.engine.analyzer import Analyzer
    from fabric_lsp.engine.workspace.workspace import Workspace
    from fabric_lsp.rules import ALL_RULES

    if args.fast_repair:
        from experiments import install_fast_repair

        install_fast_repair()
    ws_dir = os.path.join(HERE, ".generated", "profile")
    os.makedirs(ws_dir, exist_ok=True)
    path = os.path.join(ws_dir, f"train_{args.size}.py")
    text = gen.training_script(args.size, not args.plain)
    with open(path, "w") as fh:
        fh.write(text)
    analyzer = Analyzer(Workspace(ws_dir, args.environment), ALL_RULES)
    analyzer.analyze(text, path)  # warm: imports, jedi environment

    texts = []
    lines = text.split("\n")
    line, col = gen.edit_position(text)
    for key in gen.keystrokes(args.edits):
        insert(lines, line, col, key)
        line, col = gen.apply_keystroke(line, col, key)
        texts.append("\n".join(lines))

    clean, broken = [], []
    ast_ms = []
    for t in texts[: min(20, len(texts))]:
        t0 = time.perf_counter()
        with contextlib.suppress(SyntaxError):
            ast.parse(t)
        ast_ms.append((time.perf_counter() - t0) * 1000)

    profiler = None
    if args.pyinstrument:
        from pyinstrument import Profiler

        profiler = Profiler(interval=0.0005)
        profiler.start()
    phase_totals: dict[str, float] = {}
    if args.phases:
        import fabric_lsp.engine.python.parse as P

        def wrap(mod, name):
            fn = getattr(mod, name)

            def w(*a, **k):
                t0 = time.perf_counter()
                try:
                    return fn(*a, **k)
                finally:
                    phase_totals[name] = phase_totals.get(name, 0.0) + time.perf_counter() - t0

            setattr(mod, name, w)

        for n in ("_ast_parse", "_statement_spans", "_repair"):
            wrap(P, n)
    n_findings = []
    for t in texts:
        try:
            compile(t, "<x>", "exec", ast.PyCF_ONLY_AST)
            ok = True
        except SyntaxError:
            ok = False
        t0 = time.perf_counter()
        if args.gc == "off":
            gc.disable()
        try:
            f = analyzer.analyze(t, path)
        finally:
            gc.enable()
        dt = (time.perf_counter() - t0) * 1000
        (clean if ok else broken).append(dt)
        n_findings.append(len(f))
    if profiler:
        profiler.stop()
    total = sum(clean) + sum(broken)
    print(f"file: {args.size} lines, {'plain' if args.plain else 'Fabric'}; {len(texts)} edits; gc {args.gc}{'; fast repair (prototype)' if args.fast_repair else ''}; ast.parse median {statistics.median(ast_ms):.1f} ms (gc on)")
    for name, v in (("clean (ast.parse succeeds)", clean), ("broken (half-typed statement)", broken)):
        if v:
            print(f"  {name:32s} n={len(v):4d}  p50 {statistics.median(v):8.1f} ms  p95 {pct(v, 95):8.1f} ms  total {sum(v) / 1000:6.2f} s ({100 * sum(v) / total:.0f} %)")
    both = clean + broken
    print(f"  {'all edits':32s} n={len(both):4d}  p50 {statistics.median(both):8.1f} ms  p95 {pct(both, 95):8.1f} ms  = {pct(both, 95) / statistics.median(ast_ms):.2f}x ast.parse")
    print(f"  findings per edit: min {min(n_findings)} max {max(n_findings)}")
    if phase_totals:
        for k, v in sorted(phase_totals.items(), key=lambda kv: -kv[1]):
            print(f"  phase {k:18s} {v:7.2f} s ({100 * v / (total / 1000):.0f} % of analysis)")
    if profiler:
        print(profiler.output_text(unicode=True, color=False, show_all=False, timeline=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
