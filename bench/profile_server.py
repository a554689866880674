#!/usr/bin/env python
"""Profile the running fabric-lsp server with py-spy during a typing session (all threads).

    .venv/bin/python bench/profile_server.py --size 2000 --edits 200
    .venv/bin/python bench/profile_server.py --size 10000 --plain --edits 200

The server runs under ``py-spy record --format raw`` (from the bench venv); the same LSP client
as ``run.py`` types into the file. The collapsed stacks are summarised as the functions with the
most inclusive and self time (percent of the samples of all threads that were busy).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gen  # noqa: E402
import run  # noqa: E402


def summarise(raw_path: str, top: int = 25) -> str:
    incl: collections.Counter = collections.Counter()
    self_: collections.Counter = collections.Counter()
    total = 0
    with open(raw_path) as fh:
        for line in fh:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if not count.isdigit():
                continue
            n = int(count)
            frames = stack.split(";")
            # py-spy raw: "thread (id);func (file:line);..." — drop idle threads' waits
            leaf = frames[-1]
            if any(w in leaf for w in ("select (selectors.py", "wait (threading.py", "_worker (concurrent/futures/thread.py", "readline", "_read_ready")):
                continue
            total += n
            seen = set()
            for f in frames[1:]:
                key = f.split(" (")[0] + " (" + f.split(" (")[-1].split(":")[0].split("/")[-1] + ")" if " (" in f else f
                if key not in seen:
                    incl[key] += n
                    seen.add(key)
            lf = frames[-1]
            self_[lf.split(" (")[0] + " (" + lf.split(" (")[-1].split(":")[0].split("/")[-1] + ")" if " (" in lf else lf] += n
    out = [f"busy samples: {total}", "", "inclusive (top):"]
    for k, v in incl.most_common(top):
        out.append(f"  {100 * v / total:5.1f} %  {k}")
    out += ["", "self (top):"]
    for k, v in self_.most_common(top):
        out.append(f"  {100 * v / total:5.1f} %  {k}")
    return "\n".join(out)


async def session(ws, path, n_edits, raw, rate):
    """Start the server, attach py-spy to it (py-spy prints to stdout, so it cannot wrap an LSP
    server on stdio), type, then stop py-spy with SIGINT so that it writes its file."""
    import signal
    import subprocess

    from lspclient import LspClient

    client = LspClient([run.PY, "-m", "fabric_lsp"], cwd=ws, stderr_path=os.path.join(run.GENERATED, "logs", "profile-server.log"))
    await client.start()
    spy = None
    try:
        await client.initialize(ws, {"debounceMs": 0, "environmentPath": run.BENCH_VENV})
        uri, text, _ = await run.open_and_wait(client, path)
        spy = subprocess.Popen(
            [run.venv_bin("py-spy"), "record", "--format", "raw", "--rate", str(rate), "--threads", "-o", raw, "--pid", str(client.pid)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        await asyncio.sleep(1.0)  # let py-spy attach
        line, col = gen.edit_position(text)
        lat = []
        for key in gen.keystrokes(n_edits):
            t0 = time.perf_counter()
            fut = client.did_change(uri, line, col, key)
            await client.drain()
            rec = await asyncio.wait_for(fut, 120)
            lat.append((rec.t - t0) * 1000)
            line, col = gen.apply_keystroke(line, col, key)
        return lat
    finally:
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            try:
                spy.wait(30)
            except subprocess.TimeoutExpired:
                spy.kill()
        await client.stop()


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--size", type=int, default=2000)
    p.add_argument("--plain", action="store_true")
    p.add_argument("--edits", type=int, default=200)
    p.add_argument("--rate", type=int, default=200, help="py-spy samples per second")
    args = p.parse_args()
    run.ensure_bench_venv()
    ws = os.path.join(run.GENERATED, "profile-ws")
    os.makedirs(os.path.join(run.GENERATED, "logs"), exist_ok=True)
    os.makedirs(ws, exist_ok=True)
    path = os.path.join(ws, f"train_{args.size}.py")
    with open(path, "w") as fh:
        fh.write(gen.training_script(args.size, not args.plain))
    raw = os.path.join(run.GENERATED, f"py-spy-{args.size}{'-plain' if args.plain else ''}.txt")
    t0 = time.perf_counter()
    lat = asyncio.run(session(ws, path, args.edits, raw, args.rate))
    for _ in range(50):
        if os.path.exists(raw) and os.path.getsize(raw) > 0:
            break
        time.sleep(0.2)
    print(f"{args.size} lines {'plain' if args.plain else 'Fabric'}: {len(lat)} edits, p50 {run.med(lat):.1f} ms, p95 {run.pct(lat, 95):.1f} ms (under py-spy), {time.perf_counter() - t0:.0f} s")
    print(summarise(raw))
    return 0


if __name__ == "__main__":
    sys.exit(main())
