"""The workspace-aware server's figures, each next to its baseline measured in the same run.

* Dependent-file refresh: ``train.py`` does ``from config import STRATEGY``; both are open. An
  unsaved edit of ``config.py`` flips ``STRATEGY`` between ``"ddp"`` and ``"deepspeed"``; the
  latency is the time from sending that ``didChange`` until ``train.py``'s new diagnostics arrive
  (FAB001 appears / disappears). Baseline: an edit of ``train.py`` itself (time until its own
  diagnostics), in the same session, same debounce. Goal: p95 ≤ debounce + 200 ms.
* ``workspace/diagnostic`` (pull, with a progress token) on the tree ``gen.make_tree`` writes
  (2,000 modules), cold and warm (every previous result id sent back), in files/s; next to
  ``ruff check --no-cache`` and ``fabric-lsp check`` on the same tree.

Usage: ``python bench/workspace.py [--edits 60] [--runs 3] [--out bench/results/workspace-<time>.json]``
(ruff from the ``bench`` extra must be on PATH or next to this interpreter).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from gen import make_tree  # noqa: E402
from lspclient import CLIENT_CAPABILITIES, LspClient, path_to_uri  # noqa: E402

SERVER = [sys.executable, "-m", "fabric_lsp"]
TRAIN = """\
from lightning.fabric import Fabric
from config import STRATEGY


def main(model, optimizer):
    fabric = Fabric(strategy=STRATEGY)
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(optimizer)


def helper():
    return 1
"""
#: The own-file baseline types a comment at the end of ``helper``'s last line.
HELPER_LINE = TRAIN.split("\n").index("    return 1")
PULL_CAPABILITIES = {
    **CLIENT_CAPABILITIES,
    "textDocument": {**CLIENT_CAPABILITIES["textDocument"], "diagnostic": {"relatedDocumentSupport": True}},
    "workspace": {**CLIENT_CAPABILITIES["workspace"], "diagnostics": {"refreshSupport": True}},
    "window": {"workDoneProgress": True},
}


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100), as bench/run.py."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))]


def replace_all(client: LspClient, uri: str, text: str) -> None:
    doc = client.docs[uri]
    lines = doc.text.split("\n")
    doc.version += 1
    end = {"line": len(lines) - 1, "character": len(lines[-1])}
    change = {"range": {"start": {"line": 0, "character": 0}, "end": end}, "text": text}
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": doc.version}, "contentChanges": [change]})
    doc.text = text


async def refresh_session(debounce_ms: int, edits: int) -> dict:
    """One server: ``edits`` unsaved edits of config.py (dependent refresh) interleaved with
    ``edits`` edits of train.py (own-file baseline)."""
    root = tempfile.mkdtemp(prefix="fabric-lsp-bench-ws-")
    config, train = os.path.join(root, "config.py"), os.path.join(root, "train.py")
    with open(config, "w") as fh:
        fh.write('STRATEGY = "ddp"\n')
    with open(train, "w") as fh:
        fh.write(TRAIN)
    client = LspClient(SERVER)
    await client.start()
    try:
        await client.initialize(root, {"debounceMs": debounce_ms})
        config_uri, first = client.did_open(config, 'STRATEGY = "ddp"\n')
        await asyncio.wait_for(first, 60)
        train_uri, first = client.did_open(train, TRAIN)
        base = (await asyncio.wait_for(first, 60)).n  # under "ddp" (FAB007: main() never launches)
        dependent, own = [], []
        for i in range(edits):
            strategy = "deepspeed" if i % 2 == 0 else "ddp"
            t0 = time.perf_counter()
            fut = client.diag_future(train_uri, None, t0)
            replace_all(client, config_uri, f'STRATEGY = "{strategy}"\n')
            rec = await asyncio.wait_for(fut, 60)
            assert rec.n == base + (1 if strategy == "deepspeed" else 0), (strategy, rec)  # FAB001 comes and goes
            dependent.append((rec.t - t0) * 1000)
            await asyncio.sleep(0.05)
            t0 = time.perf_counter()
            col = len("    return 1") + i  # after the "#"s typed so far
            fut = client.did_change(train_uri, HELPER_LINE, col, "#")  # a comment in helper(): same findings
            rec = await asyncio.wait_for(fut, 60)
            own.append((rec.t - t0) * 1000)
            await asyncio.sleep(0.05)
    finally:
        await client.stop()
        shutil.rmtree(root, ignore_errors=True)
    return {"dependent_ms": dependent, "own_ms": own}


async def bench_refresh(edits: int, runs: int) -> dict:
    out = {}
    for debounce in (150, 0):
        dep: list[float] = []
        own: list[float] = []
        for _ in range(runs):
            res = await refresh_session(debounce, edits)
            dep += res["dependent_ms"]
            own += res["own_ms"]
        out[str(debounce)] = {
            "n": len(dep),
            "dependent_p50_ms": statistics.median(dep),
            "dependent_p95_ms": pct(dep, 95),
            "own_p50_ms": statistics.median(own),
            "own_p95_ms": pct(own, 95),
            "goal_ms": debounce + 200,
        }
        print(f"[refresh] debounce {debounce}: {out[str(debounce)]}", file=sys.stderr)
    return out


async def workspace_pull(tree: str, files: int) -> dict:
    client = LspClient(SERVER)
    await client.start()
    progress: list[dict] = []
    dispatch = client._dispatch

    def on_message(msg: dict, t: float) -> None:
        if msg.get("method") == "$/progress":
            progress.append(msg["params"]["value"])
        dispatch(msg, t)

    client._dispatch = on_message  # type: ignore[method-assign]
    try:
        root_uri = path_to_uri(tree)
        init = {"processId": os.getpid(), "rootUri": root_uri, "capabilities": PULL_CAPABILITIES, "initializationOptions": {}}
        result = await client.request("initialize", init)
        assert result["capabilities"]["diagnosticProvider"]["workspaceDiagnostics"], result["capabilities"]
        client.notify("initialized", {})
        t0 = time.perf_counter()
        cold = await client.request("workspace/diagnostic", {"previousResultIds": [], "workDoneToken": "bench"}, timeout=1800)
        cold_s = time.perf_counter() - t0
        previous = [{"uri": item["uri"], "value": item["resultId"]} for item in cold["items"]]
        t0 = time.perf_counter()
        warm = await client.request("workspace/diagnostic", {"previousResultIds": previous}, timeout=1800)
        warm_s = time.perf_counter() - t0
    finally:
        await client.stop()
    assert len(cold["items"]) == files, (len(cold["items"]), files)
    assert {item["kind"] for item in warm["items"]} == {"unchanged"}
    findings = sum(len(item["items"]) for item in cold["items"])
    return {"cold_s": cold_s, "warm_s": warm_s, "findings": findings, "progress_notifications": len(progress)}


def timed(argv: list[str], env: dict | None = None) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return time.perf_counter() - t0


def ruff_path() -> str:
    found = shutil.which("ruff") or os.path.join(os.path.dirname(sys.executable), "ruff")
    if not os.path.exists(found):
        raise SystemExit("ruff not found: pip install 'ruff==0.17.6' (the bench extra)")
    return found


async def bench_workspace(runs: int) -> dict:
    tree = tempfile.mkdtemp(prefix="fabric-lsp-bench-tree-")
    try:
        info = make_tree(tree)
        ruff = [ruff_path(), "check", "--no-cache", "--no-respect-gitignore", "--exit-zero", "-q", tree]
        one_thread = {**os.environ, "RAYON_NUM_THREADS": "1"}
        rows: dict[str, list[float]] = {"pull_cold": [], "pull_warm": [], "ruff_1": [], "ruff_n": [], "cli": []}
        findings = progress = 0
        for _ in range(runs):
            pulled = await workspace_pull(tree, info.files)
            rows["pull_cold"].append(pulled["cold_s"])
            rows["pull_warm"].append(pulled["warm_s"])
            findings, progress = pulled["findings"], pulled["progress_notifications"]
            rows["ruff_1"].append(timed(ruff, one_thread))
            rows["ruff_n"].append(timed(ruff))
            rows["cli"].append(timed([sys.executable, "-m", "fabric_lsp", "check", tree]))  # exits 1: findings
        out = {"files": info.files, "lines": info.lines, "fabric_files": info.fabric_files, "findings": findings, "progress_notifications": progress}
        for key, seconds in rows.items():
            best = statistics.median(seconds)
            out[key] = {"median_s": best, "files_per_s": info.files / best, "runs_s": seconds}
        print(f"[workspace] {out}", file=sys.stderr)
        return out
    finally:
        shutil.rmtree(tree, ignore_errors=True)


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--edits", type=int, default=60, help="config.py edits per session (and as many train.py edits)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "results", time.strftime("workspace-%Y%m%dT%H%M%S.json")))
    args = ap.parse_args()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    result = {
        "started": started,
        "load": os.getloadavg(),
        "refresh": await bench_refresh(args.edits, args.runs),
        "workspace": await bench_workspace(args.runs),
    }
    result["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(result, fh, indent=2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
