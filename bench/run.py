#!/usr/bin/env python
"""fabric-lsp benchmark suite (issue 8).

Run from the repository root with the project's interpreter:

    .venv/bin/python bench/run.py              # full measurement (≈ 15–25 min on 2 cores)
    .venv/bin/python bench/run.py --quick      # smoke run of every section (≈ 2–3 min)
    .venv/bin/python bench/run.py --runs 3 --sections spawn,edit

It measures, in one run and on the same generated inputs, fabric-lsp next to ``ruff server`` and
``jedi-language-server`` (one raw LSP client for all of them, ``bench/lspclient.py``):

* spawn → first ``publishDiagnostics`` of a 300-line Fabric/DeepSpeed script, against the floor
  ``python -c "import pygls.lsp.server"``;
* warm edit → diagnostics (p50/p95 over typed keystrokes, debounce 0) on 300/2,000/10,000-line
  files with and without Fabric code, against ``ast.parse`` of the same text in this process;
* code-action latency (p50/p95);
* CLI throughput (files/s) on a generated tree (``fabric-lsp check``, and ``ruff check`` alongside);
* peak RSS of each server after 500 edits across 20 open files.

The peers and the analysed environment (``lightning`` and ``torch``, both ``--no-deps``) live in a
benchmark-only venv: ``$FABRIC_LSP_BENCH_VENV`` or ``bench/.venv-bench``, created on first use.
Results go to ``bench/results/<timestamp>.json`` and a Markdown summary to stdout (and
``--markdown FILE``).
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import gen  # noqa: E402
from lspclient import LspClient, rss_tree_kb  # noqa: E402

GENERATED = os.path.join(HERE, ".generated")
RESULTS = os.path.join(HERE, "results")
PY = sys.executable  # the project's interpreter (fabric-lsp installed in it)
BENCH_VENV = os.environ.get("FABRIC_LSP_BENCH_VENV") or os.path.join(HERE, ".venv-bench")
#: What the bench venv holds. ruff / jedi-language-server are the peers; lightning + torch make the
#: analysed environment realistic; pyinstrument + py-spy are the profilers.
PEER_PACKAGES = ["ruff==0.17.6", "jedi-language-server==0.47.0", "pyinstrument==5.1.3", "py-spy==0.4.3"]
ENV_PACKAGES = ["lightning==2.6.6", "torch==2.13.0"]  # --no-deps: sources to analyse, not to run

SIZES = (300, 2000, 10000)
EXPERIMENT = "fabric-lsp + suggested changes (experiment)"


# -- statistics ---------------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    if not values:
        return float("nan")
    s = sorted(values)
    k = max(0, min(len(s) - 1, int(round(q / 100 * len(s) + 0.5)) - 1))
    return s[k]


def med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def summary(samples: list[float]) -> dict:
    return {"n": len(samples), "p50": med(samples), "p95": pct(samples, 95), "min": min(samples, default=float("nan")), "max": max(samples, default=float("nan"))}


def runs_summary(per_run: list[dict], key: str) -> dict:
    """Median across runs of a per-run figure, with the spread."""
    vals = [r[key] for r in per_run if r.get(key) is not None]
    return {"median": med(vals), "min": min(vals, default=float("nan")), "max": max(vals, default=float("nan")), "runs": vals}


# -- environment ----------------------------------------------------------------------------------


def venv_bin(name: str) -> str:
    return os.path.join(BENCH_VENV, "bin", name)


def ensure_bench_venv() -> None:
    if os.path.exists(venv_bin("ruff")) and os.path.exists(venv_bin("jedi-language-server")):
        probe = subprocess.run([venv_bin("python"), "-c", "import importlib.util as u; assert u.find_spec(\"lightning\") and u.find_spec(\"torch\")"], capture_output=True)
        if probe.returncode == 0:
            return
    print(f"[setup] creating the benchmark venv at {BENCH_VENV}", file=sys.stderr)
    if not os.path.exists(venv_bin("python")):
        subprocess.run([sys.executable, "-m", "venv", BENCH_VENV], check=True)
    pip = [venv_bin("python"), "-m", "pip", "install", "-q"]
    subprocess.run(pip + PEER_PACKAGES, check=True)
    subprocess.run(pip + ["--no-deps"] + ENV_PACKAGES, check=True)


def server_specs(include_shipped_jedi: bool = True) -> dict:
    """name → (argv, initializationOptions). All run with debounce 0 where it can be set."""
    specs = {
        "fabric-lsp": ([PY, "-m", "fabric_lsp"], {"debounceMs": 0, "environmentPath": BENCH_VENV}),
        "ruff": ([venv_bin("ruff"), "server"], None),
        "jedi-ls": ([venv_bin("python"), os.path.join(HERE, "jls_nodebounce.py")], {"workspace": {"environmentPath": BENCH_VENV}}),
    }
    if include_shipped_jedi:
        specs["jedi-ls (shipped, 1 s debounce)"] = ([venv_bin("jedi-language-server")], {"workspace": {"environmentPath": BENCH_VENV}})
    return specs


def versions() -> dict:
    def out(argv):
        try:
            return subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout.strip()
        except Exception as exc:
            return f"? ({exc})"

    return {
        "python": sys.version.split()[0],
        "fabric-lsp": out([PY, "-c", "import fabric_lsp; print(fabric_lsp.__version__)"]),
        "pygls": out([PY, "-c", "import importlib.metadata as m; print(m.version('pygls'))"]),
        "jedi": out([PY, "-c", "import importlib.metadata as m; print(m.version('jedi'))"]),
        "ruff": out([venv_bin("ruff"), "--version"]),
        "jedi-language-server": out([venv_bin("jedi-language-server"), "--version"]),
        "lightning (analysed env)": out([venv_bin("python"), "-c", "import importlib.metadata as m; print(m.version('lightning'))"]),
        "torch (analysed env)": out([venv_bin("python"), "-c", "import importlib.metadata as m; print(m.version('torch'))"]),
        "git": out(["git", "-C", REPO, "rev-parse", "--short", "HEAD"])
        + (" (server/ has uncommitted changes)" if out(["git", "-C", REPO, "status", "--porcelain", "server"]) else ""),
    }


def machine() -> dict:
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = "?"
    try:
        with open("/proc/meminfo") as fh:
            mem = f"{int(fh.readline().split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "memory": mem, "os": platform.platform(), "load_start": os.getloadavg()}


# -- inputs ---------------------------------------------------------------------------------------


def prepare_inputs(tree_files: int) -> dict:
    """Write every input under bench/.generated (deterministic; rewritten each run)."""
    ws = os.path.join(GENERATED, "ws")
    if os.path.isdir(ws):
        shutil.rmtree(ws)
    os.makedirs(ws)
    files = {}
    for n in SIZES:
        for fabric in (True, False):
            name = f"train_{'fabric' if fabric else 'plain'}_{n}.py"
            path = os.path.join(ws, name)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(gen.training_script(n, fabric))
            files[(n, fabric)] = path
    # the 20 files of the RSS scenario: 10 Fabric, 10 plain, 300–2,000 lines
    rss_files = []
    for i in range(20):
        n = (300, 600, 1000, 2000)[i % 4]
        fabric = i % 2 == 0
        path = os.path.join(ws, "many", f"script_{i:02d}.py")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(gen.training_script(n, fabric, seed=100 + i))
        rss_files.append(path)
    # the inputs sit in a hidden, git-ignored folder: give them a configuration of their own so
    # that fabric-lsp's default `exclude = [".*/"]` (relative to the closest [tool.fabric-lsp])
    # and the repository's settings do not apply
    with open(os.path.join(GENERATED, "pyproject.toml"), "w") as fh:
        fh.write('[project]\nname = "fabric-lsp-bench-inputs"\nversion = "0"\n\n[tool.fabric-lsp]\n')
    tree = os.path.join(GENERATED, "tree")
    if os.path.isdir(tree):
        shutil.rmtree(tree)
    info = gen.make_tree(tree, n_files=tree_files)
    return {"ws": ws, "files": files, "rss_files": rss_files, "tree": info}


def ast_parse_ms(text: str, repeat: int) -> float:
    """Median wall time of ``ast.parse(text)`` in this process (GC on, as in a server)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        ast.parse(text)
        times.append((time.perf_counter() - t0) * 1000)
    return med(times)


# -- LSP scenarios --------------------------------------------------------------------------------


async def open_and_wait(client: LspClient, path: str, timeout: float = 120.0):
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    uri, fut = client.did_open(path, text)
    await client.drain()
    rec = await asyncio.wait_for(fut, timeout)
    return uri, text, rec


async def spawn_once(name: str, argv, init, ws: str, path: str, stderr: str) -> dict:
    client = LspClient(argv, cwd=ws, stderr_path=stderr)
    await client.start()
    try:
        await client.initialize(ws, init)
        t_init = time.perf_counter() - client.spawn_t0
        _, _, rec = await open_and_wait(client, path)
        return {"first_diagnostics_s": rec.t - client.spawn_t0, "initialize_s": t_init, "n_diagnostics": rec.n}
    finally:
        await client.stop()


def floor_once() -> float:
    t0 = time.perf_counter()
    subprocess.run([PY, "-c", "import pygls.lsp.server"], check=True)
    return time.perf_counter() - t0


async def bench_spawn(inputs: dict, runs: int, per_run: int, specs: dict, log_dir: str) -> dict:
    path = inputs["files"][(300, True)]
    ws = inputs["ws"]
    samples: dict[str, list[float]] = {"floor": []}
    per_run_medians: dict[str, list[float]] = {"floor": []}
    n_diags: dict[str, int] = {}
    for name in specs:
        samples[name] = []
        per_run_medians[name] = []
    for r in range(runs):
        this_run: dict[str, list[float]] = {k: [] for k in samples}
        for _i in range(per_run):
            # interleave everything so that load changes hit every contender alike
            this_run["floor"].append(floor_once())
            for name, (argv, init) in specs.items():
                res = await spawn_once(name, argv, init, ws, path, os.path.join(log_dir, f"spawn-{name.split()[0]}.log"))
                this_run[name].append(res["first_diagnostics_s"])
                n_diags[name] = res["n_diagnostics"]
        for k, v in this_run.items():
            samples[k] += v
            per_run_medians[k].append(med(v))
        print(f"[spawn] run {r + 1}/{runs}: " + ", ".join(f"{k} {med(v):.3f}s" for k, v in this_run.items()), file=sys.stderr)
    out = {}
    floor = med(per_run_medians["floor"])
    for k in samples:
        out[k] = {
            "median_of_runs_s": med(per_run_medians[k]),
            "p95_s": pct(samples[k], 95),
            "run_medians_s": per_run_medians[k],
            "minus_floor_s": med(per_run_medians[k]) - floor,
            "n_diagnostics": n_diags.get(k),
        }
    return out


async def edit_session(argv, init, ws: str, path: str, n_edits: int, stderr: str, seed: int = 0) -> dict:
    """Open ``path``, wait for its diagnostics, then type ``n_edits`` keystrokes one by one,
    each time waiting for the diagnostics of the new version. Latency = change sent → published."""
    client = LspClient(argv, cwd=ws, stderr_path=stderr)
    await client.start()
    try:
        await client.initialize(ws, init)
        uri, text, first = await open_and_wait(client, path)
        line, col = gen.edit_position(text)
        lat = []
        for key in gen.keystrokes(n_edits, seed=seed):
            t0 = time.perf_counter()
            fut = client.did_change(uri, line, col, key)
            await client.drain()
            rec = await asyncio.wait_for(fut, 120)
            lat.append((rec.t - t0) * 1000)
            line, col = gen.apply_keystroke(line, col, key)
        return {"latencies_ms": lat, "first_n_diagnostics": first.n, "last_n_diagnostics": rec.n if lat else first.n}
    finally:
        await client.stop()


async def bench_edits(inputs: dict, runs: int, n_edits: dict, specs: dict, log_dir: str, ast_repeat: int, sizes=SIZES, big_runs=None) -> dict:
    out = {}
    all_runs = runs
    for n in sizes:
        runs = big_runs if (n >= 10000 and big_runs) else all_runs
        for fabric in (True, False):
            path = inputs["files"][(n, fabric)]
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            key = f"{n} lines, {'Fabric' if fabric else 'no Fabric'}"
            res: dict = {"ast_parse_ms_runs": []}
            per_server = {name: {"p50": [], "p95": [], "all": [], "ratio_p95": [], "ratio_p50": [], "n_diags": None} for name in specs}
            for r in range(runs):
                for name, (argv, init) in specs.items():
                    sess = await edit_session(argv, init, inputs["ws"], path, n_edits[n], os.path.join(log_dir, f"edit-{name.split()[0]}.log"), seed=r)
                    gc.collect()
                    base = ast_parse_ms(text, ast_repeat)  # measured right after each session, under the same load
                    lat = sess["latencies_ms"]
                    ps = per_server[name]
                    ps["p50"].append(med(lat))
                    ps["p95"].append(pct(lat, 95))
                    ps["all"] += lat
                    ps.setdefault("raw", []).append([round(x, 2) for x in lat])
                    ps["ratio_p95"].append(pct(lat, 95) / base)
                    ps["ratio_p50"].append(med(lat) / base)
                    ps["n_diags"] = (sess["first_n_diagnostics"], sess["last_n_diagnostics"])
                    res["ast_parse_ms_runs"].append(base)
                print(
                    f"[edit] {key} run {r + 1}/{runs}: "
                    + ", ".join(f"{k} p50 {v['p50'][-1]:.1f} p95 {v['p95'][-1]:.1f} ms" for k, v in per_server.items())
                    + f"; ast.parse {res['ast_parse_ms_runs'][-1]:.1f} ms",
                    file=sys.stderr,
                )
            res["ast_parse_ms"] = med(res["ast_parse_ms_runs"])
            res["edits_per_run"] = n_edits[n]
            res["runs"] = runs
            for name, ps in per_server.items():
                res[name] = {
                    "p50_ms": med(ps["p50"]),
                    "p95_ms": med(ps["p95"]),
                    "p95_pooled_ms": pct(ps["all"], 95),
                    "p95_runs_ms": ps["p95"],
                    # one baseline per row (all the ast.parse timings taken between the sessions of
                    # every server), so that the ratios of a row compare against the same number
                    "ratio_p95_to_ast": med(ps["p95"]) / res["ast_parse_ms"],
                    "ratio_p50_to_ast": med(ps["p50"]) / res["ast_parse_ms"],
                    "ratio_p95_to_own_run_ast": med(ps["ratio_p95"]),
                    "diagnostics_first_last": ps["n_diags"],
                    "latencies_ms_per_run": ps.get("raw"),
                }
            out[key] = res
    return out


async def bench_code_actions(inputs: dict, runs: int, n_requests: int, specs: dict, log_dir: str) -> dict:
    """Quick-fix code actions at the FAB001 diagnostic of the 300- and 2,000-line Fabric scripts
    (fabric-lsp: codeAction, codeAction/resolve, and the source.fixAll action); the peers are asked
    for code actions at the same range (ruff: its own quick fixes; jedi-ls: refactorings)."""
    out = {}
    for n in (300, 2000):
        path = inputs["files"][(n, True)]
        key = f"{n} lines, Fabric"
        res: dict = {}
        for name, (argv, init) in specs.items():
            agg = {"codeAction": [], "resolve": [], "fixAll": [], "run_p50": [], "run_p95": [], "n_actions": None}
            for _r in range(runs):
                client = LspClient(argv, cwd=inputs["ws"], stderr_path=os.path.join(log_dir, f"action-{name.split()[0]}.log"))
                await client.start()
                try:
                    await client.initialize(inputs["ws"], init)
                    uri, text, _ = await open_and_wait(client, path)
                    doc = client.docs[uri]
                    fab = [d for d in doc.last_diagnostics if d.get("code") == "FAB001"]
                    if fab:
                        rng, diags = fab[0]["range"], fab[:1]
                    else:  # peers: the line fabric-lsp flags
                        ln = next(i for i, s in enumerate(text.split("\n")) if "setup_optimizers" in s)
                        rng = {"start": {"line": ln, "character": 4}, "end": {"line": ln, "character": 20}}
                        diags = [d for d in doc.last_diagnostics if d["range"]["start"]["line"] == ln]
                    params = {"textDocument": {"uri": uri}, "range": rng, "context": {"diagnostics": diags, "triggerKind": 1}}
                    lat = []
                    actions = []
                    n_req = n_requests if name == "fabric-lsp" else max(10, n_requests // 4)  # jedi-ls takes ~0.2 s each
                    for _ in range(n_req):
                        actions, dt = await client.timed_request("textDocument/codeAction", params)
                        lat.append(dt * 1000)
                    agg["codeAction"] += lat
                    agg["run_p50"].append(med(lat))
                    agg["run_p95"].append(pct(lat, 95))
                    agg["n_actions"] = len(actions or [])
                    resolvable = [a for a in (actions or []) if isinstance(a, dict) and "edit" not in a and a.get("data") is not None]
                    if resolvable:
                        for _ in range(n_req):
                            _, dt = await client.timed_request("codeAction/resolve", resolvable[0])
                            agg["resolve"].append(dt * 1000)
                    if name == "fabric-lsp":
                        fa = {"textDocument": {"uri": uri}, "range": rng, "context": {"diagnostics": [], "only": ["source.fixAll"], "triggerKind": 1}}
                        for _ in range(max(10, n_requests // 10)):
                            _, dt = await client.timed_request("textDocument/codeAction", fa)
                            agg["fixAll"].append(dt * 1000)
                finally:
                    await client.stop()
            res[name] = {
                "codeAction_p50_ms": med(agg["run_p50"]),
                "codeAction_p95_ms": med(agg["run_p95"]),
                "codeAction_p95_pooled_ms": pct(agg["codeAction"], 95),
                "resolve": summary(agg["resolve"]) if agg["resolve"] else None,
                "fixAll": summary(agg["fixAll"]) if agg["fixAll"] else None,
                "n_actions": agg["n_actions"],
            }
            print(f"[action] {key} {name}: p50 {res[name]['codeAction_p50_ms']:.2f} p95 {res[name]['codeAction_p95_ms']:.2f} ms ({agg['n_actions']} actions)", file=sys.stderr)
        out[key] = res
    return out


async def bench_rss(inputs: dict, n_edits: int, specs: dict, log_dir: str) -> dict:
    """20 open files, ``n_edits`` keystrokes spread round-robin over them (each waited for), then
    the peak RSS of the server process (VmHWM) and of its child processes (sampled)."""
    out = {}
    files = inputs["rss_files"]
    for name, (argv, init) in specs.items():
        client = LspClient(argv, cwd=inputs["ws"], stderr_path=os.path.join(log_dir, f"rss-{name.split()[0]}.log"))
        await client.start()
        peak_tree = 0
        try:
            await client.initialize(inputs["ws"], init)
            docs = []
            for path in files:
                uri, text, _ = await open_and_wait(client, path)
                docs.append([uri, *gen.edit_position(text)])
            keys = gen.keystrokes(n_edits)
            lat = []
            for i, key in enumerate(keys):
                d = docs[i % len(docs)]
                t0 = time.perf_counter()
                fut = client.did_change(d[0], d[1], d[2], key)
                await client.drain()
                rec = await asyncio.wait_for(fut, 120)
                lat.append((rec.t - t0) * 1000)
                d[1], d[2] = gen.apply_keystroke(d[1], d[2], key)
                if i % 10 == 0:
                    s = rss_tree_kb(client.pid)
                    peak_tree = max(peak_tree, s["rss_kb"] + s["children_rss_kb"])
            s = rss_tree_kb(client.pid)
            peak_tree = max(peak_tree, s["rss_kb"] + s["children_rss_kb"])
            out[name] = {
                "peak_rss_mb": s["hwm_kb"] / 1024,
                "rss_end_mb": s["rss_kb"] / 1024,
                "children": s["n_children"],
                "children_peak_rss_mb": s["children_hwm_kb"] / 1024,
                "tree_peak_rss_sampled_mb": peak_tree / 1024,
                "edit_p50_ms": med(lat),
                "edit_p95_ms": pct(lat, 95),
            }
        finally:
            await client.stop()
        print(f"[rss] {name}: peak {out[name]['peak_rss_mb']:.0f} MB (+ children {out[name]['children_peak_rss_mb']:.0f} MB)", file=sys.stderr)
    return out


# -- CLI ------------------------------------------------------------------------------------------


def cli_help() -> str:
    return subprocess.run([PY, "-m", "fabric_lsp", "check", "--help"], capture_output=True, text=True).stdout


def checked_count(stdout: str) -> int | None:
    import re

    m = re.search(r"in (\d+) files?\.|\((\d+) files?\)", stdout)
    return int(m.group(1) or m.group(2)) if m else None


def bench_cli(inputs: dict, runs: int) -> dict:
    info = inputs["tree"]
    tree = info.root
    cwd = os.path.dirname(tree)
    help_text = cli_help()
    has_jobs = "--jobs" in help_text
    cores = os.cpu_count() or 1
    variants = {}
    base = [PY, "-m", "fabric_lsp", "check", "--exit-zero", "--environment", BENCH_VENV]
    if "--no-respect-gitignore" in help_text:  # bench/.generated is git-ignored
        base.append("--no-respect-gitignore")
    if "--no-cache" in help_text:  # the engine's throughput, not the cache's (bench/realrepos.py times the cache)
        base.append("--no-cache")
    if has_jobs:
        variants["fabric-lsp check --jobs 1"] = base + ["--jobs", "1", "tree"]
        variants[f"fabric-lsp check --jobs {cores}"] = base + ["--jobs", str(cores), "tree"]
    else:
        variants["fabric-lsp check (sequential; no --jobs yet)"] = base + ["tree"]
    ruff = [venv_bin("ruff"), "check", "--no-cache", "--no-respect-gitignore", "--exit-zero", "-q", "tree"]
    variants["ruff check --no-cache, 1 thread (peer)"] = ruff  # RAYON_NUM_THREADS=1 below
    variants[f"ruff check --no-cache, {cores} threads (peer)"] = ruff
    times = {k: [] for k in variants}
    checked = {}
    for r in range(runs):
        for name, argv in variants.items():
            env = dict(os.environ)
            if name.startswith("ruff") and "1 thread" in name:  # ruff's parallelism is rayon's
                env["RAYON_NUM_THREADS"] = "1"
            t0 = time.perf_counter()
            p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env)
            dt = time.perf_counter() - t0
            times[name].append(dt)
            if p.returncode != 0:
                raise RuntimeError(f"{argv} exited {p.returncode}: {p.stderr[-2000:]}")
            if name.startswith("fabric-lsp"):
                found = [s for s in p.stdout.splitlines() if s.startswith("Found") or s.startswith("All checks")]
                checked[name] = found[-1] if found else p.stdout[-200:]
                n = checked_count(p.stdout)
                if n != info.files:  # a figure for fewer files than generated would be meaningless
                    raise RuntimeError(f"{name}: checked {n} files, expected {info.files}; output ends {p.stdout[-500:]!r} / {p.stderr[-500:]!r}")
        print(f"[cli] run {r + 1}/{runs}: " + ", ".join(f"{k} {v[-1]:.2f}s" for k, v in times.items()), file=sys.stderr)
    out = {"files": info.files, "fabric_files": info.fabric_files, "lines": info.lines, "has_jobs": has_jobs, "cores": cores}
    for name, ts in times.items():
        out[name] = {"median_s": med(ts), "files_per_s": info.files / med(ts), "runs_s": ts, "summary": checked.get(name)}
    return out


# -- report ---------------------------------------------------------------------------------------


def fmt(x: float | None, digits: int = 1) -> str:
    if x is None or x != x:
        return "–"
    return f"{x:.{digits}f}"


def markdown(res: dict) -> str:
    L = []
    m = res["machine"]
    L.append(f"Run {res['started']} (mode: {res['mode']}); {m['cores']} cores, {m['cpu']}, {m['memory']}; "
             f"load average at start {', '.join(f'{x:.2f}' for x in m['load_start'])}, at end {', '.join(f'{x:.2f}' for x in res.get('load_end', []))}; "
             f"finished {res.get('finished')}, {res.get('duration_s', 0) / 60:.1f} min.")
    L.append("")
    L.append("Versions: " + ", ".join(f"{k} {v}" for k, v in res["versions"].items()) + ".")
    L.append("")
    goals = []
    if "spawn" in res:
        s = res["spawn"]
        L.append("### Spawn → first publishDiagnostics (300-line Fabric/DeepSpeed script)")
        L.append("")
        L.append("| contender | median of run medians (s) | p95 (s) | − floor (s) | run medians (s) |")
        L.append("|---|---|---|---|---|")
        for k, v in s.items():
            label = "floor: `python -c \"import pygls.lsp.server\"`" if k == "floor" else k
            L.append(f"| {label} | {fmt(v['median_of_runs_s'], 3)} | {fmt(v['p95_s'], 3)} | {fmt(v['minus_floor_s'], 3) if k != 'floor' else ''} | {', '.join(fmt(x, 3) for x in v['run_medians_s'])} |")
        L.append("")
        fl = s["floor"]["median_of_runs_s"]
        ours = s["fabric-lsp"]["median_of_runs_s"]
        j = s.get("jedi-ls (shipped, 1 s debounce)", {}).get("median_of_runs_s")
        goals.append(("spawn → first diagnostics ≤ floor + 0.4 s", f"{fmt(ours, 3)} s vs floor {fmt(fl, 3)} + 0.4 = {fmt(fl + 0.4, 3)} s" + (f"; jedi-ls shipped {fmt(j, 3)} s ({fmt(j / ours, 2)}× ours)" if j else ""), ours <= fl + 0.4))
    if "edit" in res:
        e = res["edit"]
        names = [k for k in next(iter(e.values())) if isinstance(next(iter(e.values()))[k], dict)]
        L.append("### Warm edit → publishDiagnostics (debounce 0), ms")
        L.append("")
        L.append("p50 / p95 are medians over runs of each run's p50 / p95; `×ast` is p95 ÷ the row's `ast.parse`: the median of the `ast.parse` timings of the same file taken in the harness process (GC on) right after every session of every server in that row.")
        L.append("")
        peer = "jedi-ls" if "jedi-ls" in names and "fabric-lsp" in names else None
        L.append("| file | ast.parse | " + " | ".join(f"{n} p50 / p95 (×ast)" for n in names) + (" | fabric-lsp p95 ÷ jedi-ls p95 |" if peer else " |"))
        L.append("|---|---|" + "---|" * (len(names) + (1 if peer else 0)))
        for key, v in e.items():
            cells = [f"{fmt(v[n]['p50_ms'])} / {fmt(v[n]['p95_ms'])} ({fmt(v[n]['ratio_p95_to_ast'], 2)}×)" for n in names]
            if peer:
                cells.append(f"{fmt(v['fabric-lsp']['p95_ms'] / v[peer]['p95_ms'], 2)}×")
            L.append(f"| {key} ({v['edits_per_run']} edits × {v['runs']} runs) | {fmt(v['ast_parse_ms'])} | " + " | ".join(cells) + " |")
        L.append("")
        for key, v in e.items():
            if "fabric-lsp" not in v:
                continue
            limit = 3.0 if "no Fabric" not in key else 1.0
            r = v["fabric-lsp"]["ratio_p95_to_ast"]
            goals.append((f"warm edit p95 ≤ {limit:g}× ast.parse, {key}", f"{fmt(v['fabric-lsp']['p95_ms'])} ms = {fmt(r, 2)}× ast.parse ({fmt(v['ast_parse_ms'])} ms)", r <= limit))
    if "action" in res:
        a = res["action"]
        L.append("### Code actions at the FAB001 diagnostic, ms")
        L.append("")
        L.append("| file | server | codeAction p50 | codeAction p95 | resolve p50 / p95 | source.fixAll p50 / p95 | actions |")
        L.append("|---|---|---|---|---|---|---|")
        for key, v in a.items():
            for name, x in v.items():
                rs = f"{fmt(x['resolve']['p50'], 2)} / {fmt(x['resolve']['p95'], 2)}" if x["resolve"] else "–"
                fa = f"{fmt(x['fixAll']['p50'], 2)} / {fmt(x['fixAll']['p95'], 2)}" if x["fixAll"] else "–"
                L.append(f"| {key} | {name} | {fmt(x['codeAction_p50_ms'], 2)} | {fmt(x['codeAction_p95_ms'], 2)} | {rs} | {fa} | {x['n_actions']} |")
        L.append("")
        worst = max(v["fabric-lsp"]["codeAction_p95_ms"] for v in a.values() if "fabric-lsp" in v)
        worst_r = max((v["fabric-lsp"]["resolve"]["p95"] for v in a.values() if "fabric-lsp" in v and v["fabric-lsp"]["resolve"]), default=0)
        goals.append(("code action p95 ≤ 20 ms", f"codeAction p95 {fmt(worst, 2)} ms, resolve p95 {fmt(worst_r, 2)} ms", max(worst, worst_r) <= 20))
    if "cli" in res:
        c = res["cli"]
        L.append(f"### CLI throughput: {c['files']} files ({c['fabric_files']} with Fabric code, {c['lines']} lines)")
        L.append("")
        L.append("| command | median wall (s) | files/s | runs (s) | result |")
        L.append("|---|---|---|---|---|")
        best = 0.0
        for k, v in c.items():
            if isinstance(v, dict):
                L.append(f"| `{k}` | {fmt(v['median_s'], 2)} | {fmt(v['files_per_s'], 0)} | {', '.join(fmt(x, 2) for x in v['runs_s'])} | {v['summary'] or ''} |")
                if k.startswith("fabric-lsp"):
                    best = max(best, v["files_per_s"])
        L.append("")
        if not c["has_jobs"]:
            L.append("`fabric-lsp check` has no `--jobs` option yet: the figure is the sequential one.")
            L.append("")
        goals.append(("CLI ≥ 300 files/s on 2 cores", f"{fmt(best, 0)} files/s" + ("" if c["has_jobs"] else " (sequential)"), best >= 300))
    if "rss" in res:
        r = res["rss"]
        L.append("### Peak RSS after 500 edits across 20 open files")
        L.append("")
        L.append("| server | peak RSS (VmHWM), MB | children peak, MB | process tree peak (sampled), MB | edit p50 / p95 in that session, ms |")
        L.append("|---|---|---|---|---|")
        for k, v in r.items():
            L.append(f"| {k} | {fmt(v['peak_rss_mb'], 0)} | {fmt(v['children_peak_rss_mb'], 0)} ({v['children']} proc) | {fmt(v['tree_peak_rss_sampled_mb'], 0)} | {fmt(v['edit_p50_ms'])} / {fmt(v['edit_p95_ms'])} |")
        L.append("")
        ours = r.get("fabric-lsp")
        if ours:
            total = ours["peak_rss_mb"] + ours["children_peak_rss_mb"]
            goals.append(("server peak RSS ≤ 250 MB", f"{fmt(ours['peak_rss_mb'], 0)} MB (+ {fmt(ours['children_peak_rss_mb'], 0)} MB in child processes = {fmt(total, 0)} MB)", total <= 250))
    L.append("### Goals")
    L.append("")
    L.append("| goal | measured | status |")
    L.append("|---|---|---|")
    for g, mtxt, ok in goals:
        L.append(f"| {g} | {mtxt} | {'met' if ok else '**not met**'} |")
    L.append("")
    return "\n".join(L)


START, END = "<!-- figures:start (bench/run.py --update-benchmarks-md) -->", "<!-- figures:end -->"


def update_benchmarks_md(md: str, results_rel: str) -> None:
    path = os.path.join(REPO, "BENCHMARKS.md")
    with open(path, encoding="utf-8") as fh:
        doc = fh.read()
    if START not in doc or END not in doc:
        raise SystemExit(f"{path}: no figure markers")
    head, rest = doc.split(START, 1)
    _, tail = rest.split(END, 1)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"{head}{START}\n\n{md}\n(raw results: `{results_rel}`, not committed)\n\n{END}{tail}")


async def main_async(args) -> dict:
    ensure_bench_venv()
    quick = args.quick
    runs = args.runs or (1 if quick else 3)
    sections = set(args.sections.split(",")) if args.sections else {"spawn", "edit", "action", "cli", "rss"}
    names = args.servers.split(",") if args.servers else None
    tree_files = args.tree_files or (2000 if not quick else 400)
    log_dir = os.path.join(GENERATED, "logs")
    os.makedirs(log_dir, exist_ok=True)
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    res: dict = {"started": started, "mode": "quick" if quick else "full", "machine": machine(), "versions": versions(), "args": vars(args)}
    t_start = time.perf_counter()
    inputs = prepare_inputs(tree_files)
    all_specs = server_specs()
    if names:
        all_specs = {k: v for k, v in all_specs.items() if k.split()[0] in names}
    lsp_specs = {k: v for k, v in all_specs.items() if "shipped" not in k}
    partial = args.json or os.path.join(RESULTS, "partial.json")
    os.makedirs(RESULTS, exist_ok=True)

    def save(section: str, t0: float) -> None:
        res.setdefault("section_s", {})[section] = time.perf_counter() - t0
        with open(partial, "w") as fh:  # a run cut short still leaves what it measured
            json.dump(res, fh, indent=1, default=str)

    if "spawn" in sections:
        t0 = time.perf_counter()
        res["spawn"] = await bench_spawn(inputs, runs, args.spawns or (1 if quick else 3), all_specs, log_dir)
        save("spawn", t0)
    if "edit" in sections:
        n_edits = {300: args.edits or (40 if quick else 200), 2000: args.edits or (40 if quick else 200), 10000: args.edits or (20 if quick else 200)}
        sizes = tuple(int(x) for x in args.sizes.split(",")) if args.sizes else SIZES
        edit_specs = dict(lsp_specs)
        if args.experiments:  # the suggested changes, patched in (bench/experiments.py): what they would buy
            edit_specs[EXPERIMENT] = ([PY, os.path.join(HERE, "fabric_lsp_experiment.py")], lsp_specs["fabric-lsp"][1])
        t0 = time.perf_counter()
        res["edit"] = await bench_edits(inputs, runs, n_edits, edit_specs, log_dir, ast_repeat=5 if quick else 9, sizes=sizes, big_runs=args.big_runs)
        save("edit", t0)
    if "action" in sections:
        t0 = time.perf_counter()
        res["action"] = await bench_code_actions(inputs, runs, 30 if quick else 200, lsp_specs, log_dir)
        save("action", t0)
    if "cli" in sections:
        t0 = time.perf_counter()
        res["cli"] = bench_cli(inputs, runs if not quick else 1)
        save("cli", t0)
    if "rss" in sections:
        t0 = time.perf_counter()
        res["rss"] = await bench_rss(inputs, 100 if quick else 500, lsp_specs, log_dir)
        save("rss", t0)
    res["load_end"] = os.getloadavg()
    res["finished"] = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    res["duration_s"] = time.perf_counter() - t_start
    return res


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="few runs, few edits, a 400-file tree: to check the harness")
    p.add_argument("--runs", type=int, help="independent runs (fresh server processes) per figure (default 3, quick 1)")
    p.add_argument("--spawns", type=int, help="spawns per run per contender (default 3, quick 1)")
    p.add_argument("--edits", type=int, help="keystrokes per edit session (default 200, quick 40/20)")
    p.add_argument("--tree-files", type=int, help="modules in the CLI tree (default 2000, quick 400)")
    p.add_argument("--sizes", help="comma list of file sizes for the edit section (default 300,2000,10000)")
    p.add_argument("--big-runs", type=int, help="runs for the 10,000-line files (default: --runs)")
    p.add_argument("--sections", help="comma list of spawn,edit,action,cli,rss (default all)")
    p.add_argument("--servers", help="comma list of fabric-lsp,ruff,jedi-ls (default all)")
    p.add_argument("--experiments", action="store_true", help="edit section: also run fabric-lsp with the suggested changes patched in (bench/experiments.py)")
    p.add_argument("--markdown", help="also write the Markdown summary to this file")
    p.add_argument("--json", help="results file (default bench/results/<timestamp>.json)")
    p.add_argument("--update-benchmarks-md", action="store_true", help="replace the figures between the markers in BENCHMARKS.md")
    args = p.parse_args()
    res = asyncio.run(main_async(args))
    os.makedirs(RESULTS, exist_ok=True)
    out = args.json or os.path.join(RESULTS, time.strftime("%Y%m%d-%H%M%S") + f"-{res['mode']}.json")
    with open(out, "w") as fh:
        json.dump(res, fh, indent=1, default=str)
    md = markdown(res)
    if args.markdown:
        with open(args.markdown, "w") as fh:
            fh.write(md + "\n")
    if args.update_benchmarks_md:
        update_benchmarks_md(md, os.path.relpath(out, REPO))
    print(md)
    print(f"\n(results: {os.path.relpath(out, REPO)})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
