"""The real-code corpus: whole public repositories, checked from their roots, every finding labelled.

Each ``repos/<owner>__<name>.toml`` pins one public repository at a commit and labels the findings
fabric-lsp reports on it (``[[finding]]``: TP or FP, with the Lightning ``file:line`` that proves it)
and the failures it should report but does not (``[[miss]]``). None of the repositories' code is
kept here: it is read from snapshots (bare git directories named ``owner+name``, each holding the
pinned commit), unpacked into a scratch folder and checked as a user would, from its root::

    python tests/realcode/report.py --snapshots DIR            # every repository
    python tests/realcode/report.py --snapshots DIR litgpt      # those whose name contains "litgpt"
    python tests/realcode/report.py --snapshots DIR --unlabelled-toml   # stubs to paste
    python tests/realcode/report.py --corpus trainer --snapshots DIR    # the Trainer corpus

The Trainer corpus (``trainer/``, for the PL rules) was labelled by hand before the rules existed:
``[[miss]]`` entries are the failures a rule should report (a reported one counts as TP) and
``[[silent]]`` entries are look-alikes that do not fail (a reported one counts as FP); ``[[finding]]``
entries label what is already reported (the FAB rules), as in the Fabric corpus.

It prints per-rule precision, the errors that Lightning does not raise on every feasible
configuration, the safe fixes that break one, the known misses still missed, and every finding
nobody has labelled yet (those count in no figure: label them before calling a rule done).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import tomllib

HERE = Path(__file__).resolve().parent
REPOS = HERE / "repos"
CORPORA = {"fabric": REPOS, "trainer": HERE / "trainer"}
FABRIC_LSP = [sys.executable, "-m", "fabric_lsp"]


@dataclass
class Repo:
    name: str  # owner/name
    commit: str
    licence: str
    labels: dict[tuple[str, int, str], dict]
    misses: list[dict]
    source: Path
    silents: list[dict] = field(default_factory=list)

    @property
    def slug(self) -> str:
        return self.name.replace("/", "__")


@dataclass
class Tally:
    tp: Counter = field(default_factory=Counter)
    fp: Counter = field(default_factory=Counter)
    unlabelled: list[tuple[str, dict]] = field(default_factory=list)
    bad_errors: list[tuple[str, dict, dict]] = field(default_factory=list)
    bad_fixes: list[tuple[str, dict, dict]] = field(default_factory=list)
    missed: list[tuple[str, dict]] = field(default_factory=list)
    found_misses: list[tuple[str, dict]] = field(default_factory=list)
    stale: list[tuple[str, dict]] = field(default_factory=list)
    silent_flagged: list[tuple[str, dict]] = field(default_factory=list)  # [[silent]] reported: FP
    silent_kept: list[tuple[str, dict]] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


def load_repos(select: list[str], folder: Path = REPOS) -> list[Repo]:
    out = []
    for path in sorted(folder.glob("*.toml")):
        data = tomllib.loads(path.read_text())
        if select and not any(s.lower() in data["repo"].lower() for s in select):
            continue
        labels = {(f["path"], int(f["line"]), f["code"]): f for f in data.get("finding", [])}
        out.append(
            Repo(
                data["repo"],
                data["commit"],
                data["licence"],
                labels,
                data.get("miss", []),
                path,
                data.get("silent", []),
            )
        )
    return out


def snapshot_dir(snapshots: Path, repo: Repo) -> Path | None:
    base = snapshots / repo.name.replace("/", "+")
    for candidate in (base / "repo", base):
        if (candidate / "objects").is_dir() or (candidate / ".git").is_dir():
            return candidate
    return None


class Unpacked(Exception):
    """A pinned tree that cannot be unpacked (a snapshot without some of its files, no licence)."""


def unpack(git_dir: Path, repo: Repo, scratch: Path) -> Path:
    """The pinned tree, written from the snapshot's objects. A snapshot holds no file of 4 MiB or
    more (data, slides, images): those are left out and named on standard error."""
    root = scratch / repo.slug / repo.commit[:12]
    if root.is_dir():
        return root
    tmp = root.with_suffix(".part")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    git = ["git", f"--git-dir={git_dir}"]
    listing = subprocess.run([*git, "ls-tree", "-r", "-z", repo.commit], capture_output=True)
    if listing.returncode != 0:
        raise Unpacked(
            f"{repo.name}: the snapshot has no commit {repo.commit[:12]}: {listing.stderr.decode()[-300:].strip()}"
        )
    blobs = []
    for entry in listing.stdout.decode("utf-8", "surrogateescape").split("\0"):
        meta, _, path = entry.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "blob" and parts[0] != "120000":
            blobs.append((parts[2], path))
    missing = _write_blobs(git, blobs, tmp)
    if missing:
        print(
            f"{repo.name}: {len(missing)} files not in the snapshot (left out): {', '.join(missing[:5])}",
            file=sys.stderr,
        )
    if not (tmp / repo.licence).is_file():
        raise Unpacked(f"{repo.source.name}: no licence file {repo.licence!r} at {repo.commit}")
    tmp.rename(root)
    return root


def _write_blobs(git: list[str], blobs: list[tuple[str, str]], into: Path) -> list[str]:
    """Writes each (object, path) the snapshot holds under ``into``; returns the paths it lacks."""
    request = "".join(f"{sha}\n" for sha, _ in blobs).encode()
    out = subprocess.run([*git, "cat-file", "--batch"], input=request, capture_output=True, check=True).stdout
    missing, pos = [], 0
    for _, path in blobs:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[1] != b"blob":
            missing.append(path)
            continue
        size = int(header[2])
        target = into / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(out[pos : pos + size])
        pos += size + 1
    return missing


#: what the check prints where a file's analysis failed (its findings are missing, not zero)
INTERNAL_ERROR = "internal error while checking"


def check(root: Path, extra: list[str]) -> tuple[list[dict], float, list[str]]:
    """The findings of ``fabric-lsp check`` from ``root``, its wall time, and the files whose
    analysis failed (an internal error: their findings are missing, so figures would be wrong)."""
    import time

    t0 = time.perf_counter()
    proc = subprocess.run(
        [*FABRIC_LSP, "check", "--format", "json", "--exit-zero", ".", *extra],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    elapsed = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"fabric-lsp check failed in {root}:\n{proc.stderr[-4000:]}")
    failed = [line for line in proc.stderr.splitlines() if INTERNAL_ERROR in line]
    return json.loads(proc.stdout or "[]"), elapsed, failed


def finding_key(f: dict) -> tuple[str, int, str]:
    name = f["filename"]
    if f.get("cell"):
        name = f"{name}:cell {f['cell']}"
    return (name, f["location"]["row"], f["code"])


def judge(repo: Repo, findings: list[dict], tally: Tally) -> None:
    seen = set()
    ground = {(e["path"], int(e["line"]), e["code"]) for e in (*repo.misses, *repo.silents)}
    for f in findings:
        key = finding_key(f)
        seen.add(key)
        label = repo.labels.get(key)
        if label is None:
            if key not in ground:  # a [[miss]] or [[silent]] is counted by print_ground_truth
                tally.unlabelled.append((repo.name, f))
            continue
        (tally.tp if label["label"] == "TP" else tally.fp)[f["code"]] += 1
        if f["severity"] == "error" and not (label["label"] == "TP" and label.get("certain", False)):
            tally.bad_errors.append((repo.name, f, label))
        fix = f.get("fix")
        if fix and fix["applicability"] == "safe" and label.get("fix_ok") is False:
            tally.bad_fixes.append((repo.name, f, label))
    for miss in repo.misses:
        key = (miss["path"], int(miss["line"]), miss["code"])
        (tally.found_misses if key in seen else tally.missed).append((repo.name, miss))
    for silent in repo.silents:
        key = (silent["path"], int(silent["line"]), silent["code"])
        (tally.silent_flagged if key in seen else tally.silent_kept).append((repo.name, silent))
    for key, label in repo.labels.items():
        if key not in seen:
            tally.stale.append((repo.name, label))


def stub(repo: str, f: dict) -> str:
    path = finding_key(f)[0]
    return (
        f'# {repo}\n[[finding]]\npath = {json.dumps(path)}\nline = {f["location"]["row"]}\ncode = "{f["code"]}"\n'
        f'severity = "{f["severity"]}"\nlabel = "?"  # TP | FP\ncertain = false  # TP on every feasible configuration\n'
        f'lightning = ""  # lightning/fabric/...py:LINE\nwhy = {json.dumps(f["message"][:300])}\n'
    )


def print_ground_truth(tally: Tally) -> None:
    """Per rule, the hand-written ground truth against what the check reports: a ``[[miss]]``
    reported is a TP, a ``[[silent]]`` reported is an FP. Any rule code is counted as it comes."""
    found = Counter(m["code"] for _, m in tally.found_misses)
    missed = Counter(m["code"] for _, m in tally.missed)
    flagged = Counter(s["code"] for _, s in tally.silent_flagged)
    kept = Counter(s["code"] for _, s in tally.silent_kept)
    codes = sorted(set(found) | set(missed) | set(flagged) | set(kept))
    print("ground truth (hand-labelled): misses found = TP, silents reported = FP")
    print(f"{'rule':8} {'misses':>6} {'found':>5} {'recall':>6} {'silents':>7} {'FP':>3} {'precision':>9}")
    for code in codes + ["all"]:
        pick = (lambda c: sum(c.values())) if code == "all" else (lambda c, code=code: c[code])
        tp, fn, fp, tn = pick(found), pick(missed), pick(flagged), pick(kept)
        recall = f"{tp / (tp + fn):6.3f}" if tp + fn else f"{'-':>6}"
        precision = f"{tp / (tp + fp):9.3f}" if tp + fp else f"{'-':>9}"
        print(f"{code:8} {tp + fn:6} {tp:5} {recall} {fp + tn:7} {fp:3} {precision}")
    for repo, s in tally.silent_flagged:
        print(f"  FP on a silent {repo}: {s['path']}:{s['line']} {s['code']} {s.get('why', '')[:120]}")


def print_report(tally: Tally, repos: list[Repo], stubs: bool, trainer: bool = False) -> None:
    codes = sorted(set(tally.tp) | set(tally.fp))
    total_tp, total_fp = sum(tally.tp.values()), sum(tally.fp.values())
    print(f"\n{len(repos)} repositories, {total_tp + total_fp} labelled findings, {len(tally.unlabelled)} unlabelled")
    print(f"{'rule':8} {'TP':>4} {'FP':>4} {'precision':>9}")
    for code in codes:
        tp, fp = tally.tp[code], tally.fp[code]
        print(f"{code:8} {tp:4} {fp:4} {tp / (tp + fp):9.3f}")
    if total_tp + total_fp:
        print(f"{'all':8} {total_tp:4} {total_fp:4} {total_tp / (total_tp + total_fp):9.3f}")
    print(f"errors where Lightning does not fail on every feasible configuration: {len(tally.bad_errors)}")
    for repo, f, label in tally.bad_errors:
        print(f"  {repo}: {finding_key(f)} [{label['label']}] {label.get('why', '')[:160]}")
    print(f"safe fixes that break a feasible configuration: {len(tally.bad_fixes)}")
    for repo, f, label in tally.bad_fixes:
        print(f"  {repo}: {finding_key(f)} {label.get('why', '')[:160]}")
    print(f"known misses: {len(tally.missed)} still missed, {len(tally.found_misses)} now reported")
    for repo, miss in tally.missed:
        print(f"  missed {repo}: {miss['path']}:{miss['line']} {miss['code']} {miss.get('why', '')[:120]}")
    if tally.stale:
        print(f"labels no longer reported: {len(tally.stale)}")
        for repo, label in tally.stale:
            print(f"  {repo}: {label['path']}:{label['line']} {label['code']} [{label['label']}]")
    if trainer:
        print_ground_truth(tally)
    for repo, f in tally.unlabelled:
        if stubs:
            print(stub(repo, f))
        else:
            print(f"  UNLABELLED {repo}: {':'.join(map(str, finding_key(f)))} [{f['severity']}] {f['message'][:200]}")
    print("seconds per repository: " + ", ".join(f"{n} {s:.1f}" for n, s in tally.seconds.items()))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("select", nargs="*", help="only repositories whose owner/name contains one of these")
    p.add_argument(
        "--snapshots",
        default=os.environ.get("FABRIC_LSP_SNAPSHOTS"),
        help="folder of the snapshots (owner+name/…), or $FABRIC_LSP_SNAPSHOTS",
    )
    p.add_argument(
        "--scratch",
        default=os.path.join(tempfile.gettempdir(), "fabric-lsp-realcode"),
        help="where the pinned trees are unpacked",
    )
    p.add_argument("--unlabelled-toml", action="store_true", help="print unlabelled findings as [[finding]] stubs")
    p.add_argument("--json", metavar="FILE", help="also write every finding with its label to FILE")
    p.add_argument(
        "--corpus",
        choices=sorted(CORPORA),
        default="fabric",
        help="which corpus: repos/ (Fabric, the default) or trainer/ (the PL rules)",
    )
    args, extra = p.parse_known_args(argv)
    if not args.snapshots:
        p.error("--snapshots DIR (or $FABRIC_LSP_SNAPSHOTS) is needed: the folder the repositories were fetched into")
    repos = load_repos(args.select, CORPORA[args.corpus])
    tally, dump = Tally(), []
    internal_errors = 0
    for repo in repos:
        git_dir = snapshot_dir(Path(args.snapshots), repo)
        if git_dir is None:
            print(f"missing snapshot of {repo.name}: fetch github:{repo.name} into {args.snapshots}", file=sys.stderr)
            continue
        try:
            root = unpack(git_dir, repo, Path(args.scratch))
        except Unpacked as e:
            print(f"skipped: {e}", file=sys.stderr)
            continue
        findings, seconds, failed = check(root, extra)
        print(f"{repo.name}: {len(findings)} findings in {seconds:.1f} s", file=sys.stderr, flush=True)
        for line in failed:
            print(f"{repo.name}: {line}", file=sys.stderr, flush=True)
        internal_errors += len(failed)
        tally.seconds[repo.name] = seconds
        judge(repo, findings, tally)
        dump += [{"repo": repo.name, **f, "label": repo.labels.get(finding_key(f))} for f in findings]
    print_report(tally, repos, args.unlabelled_toml, trainer=args.corpus == "trainer")
    print(f"files whose analysis failed (their findings missing): {internal_errors}")
    if args.json:
        Path(args.json).write_text(json.dumps(dump, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
