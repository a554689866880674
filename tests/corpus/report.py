"""Precision and recall of fabric-lsp on the labelled corpus.

Run: ``.venv/bin/python tests/corpus/report.py [--environment PATH] [--case NAME ...]``

Each project is a folder ``tests/corpus/<NNN-short-name>/`` with one or more ``.py`` files and an
``expected.json``::

    {"label": "certain|possible|guarded|unknown|silent",
     "findings": [{"file": "train.py", "code": "FAB001", "line": 12, "severity": "error"}],
     "note": "why, citing the facts sheet"}

``line`` is the 1-based line of the ``setup_optimizers`` call; ``file`` is relative to the project.
A reported finding *matches* an expected one on (file, line, code); a match whose severity differs is
counted as a severity mismatch (still a true positive for precision/recall). The expectation is what
Lightning does (``shared/lightning-fabric-facts.md``), not what the engine outputs.

``--environment`` is the analysed Python environment (a venv with or without ``lightning``); by
default none is given, and jedi falls back to the interpreter running this script.

This module is also the harness that ``tests/test_corpus.py`` imports.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

CORPUS = Path(__file__).resolve().parent
LABELS = ("certain", "possible", "guarded", "unknown", "silent")
_CASE_DIR = re.compile(r"^\d{3}-[a-z0-9-]+$")

# (file relative to the project, code, 1-based line) → severity
Key = tuple[str, str, int]


@dataclass
class Case:
    name: str
    path: Path
    label: str
    expected: dict[Key, str]
    note: str

    def files(self) -> list[Path]:
        return sorted(p for p in self.path.rglob("*.py") if "__pycache__" not in p.parts)


@dataclass
class Outcome:
    case: Case
    actual: dict[Key, str]
    messages: dict[Key, str] = field(default_factory=dict)

    @property
    def matched(self) -> set[Key]:
        return set(self.case.expected) & set(self.actual)

    @property
    def missing(self) -> set[Key]:  # false negatives
        return set(self.case.expected) - set(self.actual)

    @property
    def extra(self) -> set[Key]:  # false positives
        return set(self.actual) - set(self.case.expected)

    @property
    def severity_mismatches(self) -> set[Key]:
        return {k for k in self.matched if self.case.expected[k] != self.actual[k]}

    @property
    def exact(self) -> bool:
        return self.case.expected == self.actual

    def describe(self) -> list[str]:
        lines = []
        for k in sorted(self.missing):
            lines.append(f"{self.case.name}: MISSING {k[1]} {k[0]}:{k[2]} (expected {self.case.expected[k]})")
        for k in sorted(self.extra):
            msg = self.messages.get(k, "")
            lines.append(f"{self.case.name}: UNEXPECTED {k[1]} {k[0]}:{k[2]} {self.actual[k]}: {msg}")
        for k in sorted(self.severity_mismatches):
            lines.append(
                f"{self.case.name}: SEVERITY {k[1]} {k[0]}:{k[2]} expected {self.case.expected[k]}, "
                f"got {self.actual[k]}: {self.messages.get(k, '')}"
            )
        return lines


def load_cases(root: Path = CORPUS) -> list[Case]:
    cases = []
    for d in sorted(root.iterdir()):
        if not d.is_dir() or not _CASE_DIR.match(d.name):
            continue
        spec = json.loads((d / "expected.json").read_text(encoding="utf-8"))
        label = spec["label"]
        if label not in LABELS:
            raise ValueError(f"{d.name}: unknown label {label!r}")
        expected = {(f["file"], f["code"], int(f["line"])): f["severity"] for f in spec["findings"]}
        if len(expected) != len(spec["findings"]):
            raise ValueError(f"{d.name}: duplicate expected finding")
        cases.append(Case(d.name, d, label, expected, spec.get("note", "")))
    return cases


def run_case(case: Case, environment_path: Optional[str] = None) -> Outcome:
    """Analyse every ``.py`` file of the project with a fresh workspace rooted at the project."""
    from fabric_lsp.engine import Analyzer
    from fabric_lsp.rules import ALL_RULES
    from fabric_lsp.engine.workspace import Workspace

    analyzer = Analyzer(Workspace(root=str(case.path), environment_path=environment_path), ALL_RULES)
    actual: dict[Key, str] = {}
    messages: dict[Key, str] = {}
    for file in case.files():
        text = file.read_text(encoding="utf-8")
        rel = file.relative_to(case.path).as_posix()
        for f in analyzer.analyze(text, str(file)):
            key = (rel, f.code, f.span.start.line + 1)
            actual[key] = f.severity.value
            messages[key] = f.message
    return Outcome(case, actual, messages)


def _ratio(num: int, den: int) -> str:
    return f"{num / den:.3f}" if den else "  n/a"


def summarize(outcomes: list[Outcome], out=None) -> dict:
    """Print the per-label table, the overall figures and the mismatches; return the figures."""
    out = out or sys.stdout
    rows = {}
    header = f"{'label':<9} {'cases':>5} {'exact':>5} {'expect':>6} {'found':>5} {'TP':>4} {'FP':>4} {'FN':>4} {'sev≠':>4} {'precision':>9} {'recall':>7}"
    print(header, file=out)
    print("-" * len(header), file=out)
    for label in (*LABELS, "overall"):
        group = [o for o in outcomes if label == "overall" or o.case.label == label]
        if not group:
            continue
        tp = sum(len(o.matched) for o in group)
        fp = sum(len(o.extra) for o in group)
        fn = sum(len(o.missing) for o in group)
        sev = sum(len(o.severity_mismatches) for o in group)
        exp = sum(len(o.case.expected) for o in group)
        found = sum(len(o.actual) for o in group)
        exact = sum(o.exact for o in group)
        rows[label] = dict(cases=len(group), exact=exact, expected=exp, found=found, tp=tp, fp=fp, fn=fn, severity=sev)
        if label == "overall":
            print("-" * len(header), file=out)
        print(
            f"{label:<9} {len(group):>5} {exact:>5} {exp:>6} {found:>5} {tp:>4} {fp:>4} {fn:>4} {sev:>4} "
            f"{_ratio(tp, tp + fp):>9} {_ratio(tp, tp + fn):>7}",
            file=out,
        )
    # severity-aware figures: a finding counts only when its severity matches too
    strict_tp = rows["overall"]["tp"] - rows["overall"]["severity"]
    print(
        f"\nseverity-exact: precision {_ratio(strict_tp, rows['overall']['found'])}, "
        f"recall {_ratio(strict_tp, rows['overall']['expected'])}",
        file=out,
    )
    errors_on_non_raising = [
        (o.case.name, k)
        for o in outcomes
        for k, sev in o.actual.items()
        if sev == "error" and o.case.expected.get(k) != "error"
    ]
    print(f"errors where Lightning does not certainly raise: {len(errors_on_non_raising)}", file=out)
    for name, k in errors_on_non_raising:
        print(f"  {name}: {k[0]}:{k[2]}", file=out)
    mismatches = [line for o in outcomes for line in o.describe()]
    print(f"\nmismatches ({len(mismatches)}):", file=out)
    for line in mismatches:
        print("  " + line, file=out)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--environment", help="analysed Python environment (venv path)")
    parser.add_argument("--case", action="append", help="only these cases (name or prefix)")
    args = parser.parse_args(argv)
    cases = load_cases()
    if args.case:
        cases = [c for c in cases if any(c.name.startswith(p) for p in args.case)]
    env = args.environment
    print(f"fabric-lsp corpus: {len(cases)} projects, analysed environment: {env or 'none (no lightning)'}\n")
    outcomes = [run_case(c, env) for c in cases]
    summarize(outcomes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
