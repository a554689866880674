#!/usr/bin/env python
"""fabric-lsp on real code: whole corpus repositories, checked from their roots, next to ruff.

Each repository of the real-code corpus (``tests/realcode/repos/*.toml``) is unpacked at its
pinned commit from the snapshots (``tests/realcode/report.py`` does the unpacking) and, from its
root, in one run:

* the parse floor: one fresh Python process that reads and ``ast.parse``-s every ``.py`` file;
* ``ruff check --select ALL --no-cache --exit-zero .`` (the project venv's ruff);
* ``fabric-lsp check .`` with the default ``--jobs`` (cold: ``--no-cache`` when the CLI has it);
* ``fabric-lsp check .`` again on the unchanged tree (the cached run, once there is a cache; its
  output goes to a pipe, so where the CLI keeps run records, the replay of the first run's);

each timed as the wall time of the whole process, best of ``--runs``::

    .venv/bin/python bench/realrepos.py --snapshots DIR                # the six repositories of the speed issue
    .venv/bin/python bench/realrepos.py --snapshots DIR --all          # every corpus repository
    .venv/bin/python bench/realrepos.py --snapshots DIR litgpt --slowest 10 --runs 3 --json out.json
    .venv/bin/python bench/realrepos.py --snapshots DIR --without PL     # + the cold run without the PL rules
    .venv/bin/python bench/realrepos.py --snapshots DIR --environment tests/.artifacts/venv-lightning

``--environment PATH`` analyses every tree against that interpreter or virtualenv (the CLI's
``--environment``, the server's ``environmentPath``): one with Lightning installed is what a user
of Lightning has, where jedi knows Lightning's types (the default is fabric-lsp's own venv).

``--without CODES`` also times the cold check with ``--ignore CODES``: what a family of rules costs
a tree (the Trainer rules on a repository that does not use the Trainer should cost nothing).

``--venv PATH`` runs fabric-lsp (and the parse floor) from another virtualenv with fabric-lsp
installed (default: the project's ``.venv``), to compare interpreters: fabric-lsp is pure Python,
and how the interpreter was built counts (the table's note names it). ruff is always the project
venv's.

``--cpu`` also reports the CPU time (user + system, with every process the check waited for: the
forker and its workers) of the cold check with the default ``--jobs`` and of one with ``--jobs 1``:
what the workers do beyond one process's work is the first minus the second (each worker parses
and works out for itself what the files it is handed share with the other's).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "realcode"))

import parity  # noqa: E402  (the server's workspace/diagnostic over a tree)
import report  # noqa: E402  (the corpus loader and the snapshot unpacking)

CACHE = ".fabric_lsp_cache"

VENV = ROOT / ".venv"
RUFF = str(VENV / "bin" / "ruff")
#: the processes run as on a developer's machine: bytecode written and read (a session that sets
#: PYTHONDONTWRITEBYTECODE would otherwise compile fabric-lsp's own modules again in every process)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONWARNINGS": "ignore"}
DEFAULT = (
    "Lightning-AI/litgpt",
    "Lightning-AI/pytorch-lightning",
    "Lightning-AI/lightning-thunder",
    "tanganke/fusion_bench",
    "Eclectic-Sheep/sheeprl",
    "seonghyun26/funcbind",
)
#: The parse floor, run in a fresh interpreter from the repository's root; prints the file count.
PARSE_FLOOR = """
import ast, os
n = 0
for folder, _, names in os.walk("."):
    for name in names:
        if name.endswith(".py"):
            with open(os.path.join(folder, name), "rb") as f:
                source = f.read()
            try:
                ast.parse(source)
            except (SyntaxError, ValueError):
                pass
            n += 1
print(n)
"""
TIMES = ("floor", "ruff", "fabric", "second")


def timed(cmd: list[str], cwd: Path, ok: tuple[int, ...] = (0,)) -> tuple[float, str]:
    """Wall time of ``cmd`` run in ``cwd`` (NaN when it fails) and its standard output."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, errors="replace")
    seconds = time.perf_counter() - t0
    if proc.returncode not in ok:
        print(f"{cwd}: {' '.join(cmd[:3])} exited {proc.returncode}: {proc.stderr[-1500:]}", file=sys.stderr)
        return float("nan"), proc.stdout
    return seconds, proc.stdout


def cpu_timed(cmd: list[str], cwd: Path, ok: tuple[int, ...] = (0,)) -> tuple[float, float]:
    """Wall and CPU time of ``cmd`` (user + system, with every process it waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds = timed(cmd, cwd, ok)[0]
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return seconds, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def fabric_lsp(venv: Path) -> str:
    return str(venv / "bin" / "fabric-lsp")


def venv_python(venv: Path) -> str:
    return str(venv / "bin" / "python")


def interpreter(venv: Path) -> str:
    """The Python that runs fabric-lsp from ``venv``: its version and where it is installed."""
    code = "import sys; print(sys.version.split()[0], sys.base_prefix)"
    out = subprocess.run([venv_python(venv), "-c", code], capture_output=True, text=True).stdout.split(maxsplit=1)
    return f"CPython {out[0]} ({out[1].strip()})" if len(out) == 2 else "an interpreter that did not answer"


def cold_flags(venv: Path) -> list[str]:
    """Whether this fabric-lsp keeps a cache (the first run starts without one, the second reads it)."""
    out = subprocess.run([fabric_lsp(venv), "check", "--help"], capture_output=True, text=True).stdout
    return ["--no-cache"] if "--no-cache" in out else []


def server_seconds(root: Path, environment: str | None, venv: Path) -> float:
    """The server's ``workspace/diagnostic`` over the whole tree, from ``initialize`` to the report (cold)."""
    shutil.rmtree(root / CACHE, ignore_errors=True)
    t0 = time.perf_counter()
    asyncio.run(parity.lsp_findings(root, environment, venv_python(venv)))
    return time.perf_counter() - t0


def measure(
    root: Path,
    runs: int,
    server: bool,
    without: str | None = None,
    environment: str | None = None,
    cpu: bool = False,
    venv: Path = VENV,
) -> dict:
    check = [fabric_lsp(venv), "check", *(("--environment", environment) if environment else ())]
    kinds = (
        *TIMES,
        *(("server",) if server else ()),
        *(("without",) if without else ()),
        *(("cpu", "cpu_one") if cpu else ()),
    )
    samples: dict[str, list[float]] = {k: [] for k in kinds}
    files = 0
    for _ in range(runs):
        seconds, out = timed([venv_python(venv), "-W", "ignore", "-c", PARSE_FLOOR], root)
        files = int(out.strip() or 0)
        samples["floor"].append(seconds)
        samples["ruff"].append(timed([RUFF, "check", "--select", "ALL", "--no-cache", "--exit-zero", "."], root)[0])
        shutil.rmtree(root / CACHE, ignore_errors=True)  # cold: the first run writes the cache, the second reads it
        seconds, used = cpu_timed([*check, "."], root, ok=(0, 1))
        samples["fabric"].append(seconds)
        samples["second"].append(timed([*check, "."], root, ok=(0, 1))[0])
        if cpu:
            samples["cpu"].append(used)
            shutil.rmtree(root / CACHE, ignore_errors=True)
            samples["cpu_one"].append(cpu_timed([*check, "--jobs", "1", "."], root, ok=(0, 1))[1])
            shutil.rmtree(root / CACHE, ignore_errors=True)
        if server:
            samples["server"].append(server_seconds(root, environment, venv))
        if without:
            shutil.rmtree(root / CACHE, ignore_errors=True)
            samples["without"].append(timed([*check, "--ignore", without, "."], root, ok=(0, 1))[0])
            shutil.rmtree(root / CACHE, ignore_errors=True)
    return {"files": files, **{k: min(v) for k, v in samples.items()}, "samples": samples}


def mentions_fabric(path: Path) -> bool:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return False
    return "Fabric" in text or "fabric" in text


def slowest(root: Path, k: int, environment: str | None = None, venv: Path = VENV) -> list[tuple[float, str]]:
    """Each file of the run that mentions Fabric, checked alone (``--jobs 1``): the ``k`` slowest."""
    check = [fabric_lsp(venv), "check", *(("--environment", environment) if environment else ())]
    listed = timed([*check, "--show-files", "."], root)[1].splitlines()
    times = []
    for name in listed:
        if name and mentions_fabric(root / name):
            times.append((timed([*check, "--jobs", "1", name], root, ok=(0, 1))[0], name))
    return sorted(times, key=lambda t: t[0] if t[0] == t[0] else -1.0, reverse=True)[:k]  # a failed check (NaN) last


def row(name: str, m: dict) -> str:
    budget = 3 * m["floor"] + 0.5
    load = "/".join(f"{x:.2f}" for x in m["load"])
    return (
        f"| {name} | {m['files']} | {m['fabric']:.2f} s | {m['ruff']:.2f} s | {m['floor']:.2f} s "
        f"| {m['fabric'] / m['ruff']:.1f}× | {m['fabric'] / budget:.2f}× | {m['second']:.2f} s "
        f"| {m['second'] / m['fabric']:.2f} | {load} |"
        + (f" {m['server']:.2f} s ({m['server'] / m['fabric']:.2f}×) |" if "server" in m else "")
        + (f" {m['without']:.2f} s ({m['fabric'] / m['without']:.2f}×) |" if "without" in m else "")
        + (f" {m['cpu']:.2f} s ({m['cpu_one']:.2f} s) |" if "cpu" in m else "")
    )


def table(
    results: dict[str, dict],
    cold: list[str],
    runs: int,
    without: str | None = None,
    environment: str | None = None,
    python: str | None = None,
) -> str:
    second = "second run (cached)" if cold else "second run (no cache yet)"
    server = any("server" in m for m in results.values())
    cpu = any("cpu" in m for m in results.values())
    head = (
        f"| repository | .py files | fabric-lsp | ruff ALL | parse floor | × ruff | × (3·floor+0.5 s) | {second} "
        "| second/first | load before (1/5/15 min) |" + (" workspace/diagnostic (× CLI) |" if server else "")
        + (f" without {without}, cold (all ÷ without) |" if without else "")
        + (" CPU, cold (--jobs 1) |" if cpu else "")
        + "\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
        + ("--:|" if server else "")
        + ("--:|" if without else "")
        + ("--:|" if cpu else "")
    )
    note = f"\nwall times, best of {runs} run(s); {os.cpu_count()} cores; fabric-lsp with the default --jobs"
    if python:
        note += f"; fabric-lsp on {python}"
    if environment:
        note += f"; analysed environment {environment}"
    return "\n".join([head, *(row(n, m) for n, m in results.items())]) + note


def select(args: argparse.Namespace) -> list:
    repos = report.load_repos(args.names)
    if args.names or args.all:
        return repos
    return [r for r in repos if r.name in DEFAULT]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="*", help="only repositories whose owner/name contains one of these")
    p.add_argument("--all", action="store_true", help="every corpus repository (default: the six of the speed issue)")
    p.add_argument("--snapshots", default=os.environ.get("FABRIC_LSP_SNAPSHOTS"), help="folder of the snapshots (owner+name/…), or $FABRIC_LSP_SNAPSHOTS")
    p.add_argument("--scratch", default=os.path.join(tempfile.gettempdir(), "fabric-lsp-realcode"), help="where the pinned trees are unpacked (shared with report.py)")
    p.add_argument("--runs", type=int, default=1, help="runs per repository; the best (lowest) time of each is reported")
    p.add_argument("--slowest", type=int, default=0, metavar="K", help="also check each file that mentions Fabric alone (--jobs 1) and print the K slowest")
    p.add_argument("--json", metavar="FILE", help="also write every time to FILE")
    p.add_argument("--server", action="store_true", help="also time the server's workspace/diagnostic over the tree (cold)")
    p.add_argument("--environment", metavar="PATH", help="the interpreter or virtualenv every check analyses (e.g. one with Lightning installed)")
    p.add_argument("--without", metavar="CODES", help="also time the cold check with --ignore CODES (e.g. PL: what the Trainer rules cost)")
    p.add_argument("--cpu", action="store_true", help="also report the CPU time of the cold check, and of one with --jobs 1")
    p.add_argument("--venv", default=str(VENV), metavar="PATH", help="the virtualenv fabric-lsp runs from (default: the project's .venv)")
    args = p.parse_args(argv)
    if not args.snapshots:
        p.error("--snapshots DIR (or $FABRIC_LSP_SNAPSHOTS) is needed: the folder the repositories were fetched into")
    venv = Path(args.venv).resolve()
    if not Path(fabric_lsp(venv)).is_file():
        p.error(f"--venv {args.venv}: no bin/fabric-lsp there (install fabric-lsp into it first)")
    cold = cold_flags(venv)
    python = interpreter(venv)
    environment = str(Path(args.environment).resolve()) if args.environment else None
    # fabric-lsp's own bytecode written once, before the first timed run (as an install leaves it)
    subprocess.run([venv_python(venv), "-m", "compileall", "-q", str(ROOT / "server" / "fabric_lsp")], env=ENV, check=False)
    results: dict[str, dict] = {}
    for repo in select(args):
        git_dir = report.snapshot_dir(Path(args.snapshots), repo)
        if git_dir is None:
            print(f"missing snapshot of {repo.name}", file=sys.stderr)
            continue
        try:
            root = report.unpack(git_dir, repo, Path(args.scratch))
        except report.Unpacked as e:
            print(f"skipped: {e}", file=sys.stderr)
            continue
        load = os.getloadavg()
        results[repo.name] = {"load": load, **measure(root, args.runs, args.server, args.without, environment, args.cpu, venv)}
        print(row(repo.name, results[repo.name]), file=sys.stderr, flush=True)
        if args.slowest:
            results[repo.name]["slowest"] = top = slowest(root, args.slowest, environment, venv)
            print(f"\n{repo.name}: the {len(top)} slowest files checked alone (--jobs 1, start-up included)")
            print("\n".join(f"  {s:6.2f} s  {name}" for s, name in top))
    print("\n" + table(results, cold, args.runs, args.without, environment, python))
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": args.runs, "statistic": "min", "cold_flags": cold, "environment": environment, "python": python, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
