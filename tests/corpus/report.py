"""Precision and recall of fabric-lsp on the labelled corpus, per rule and per label.

Run: ``.venv/bin/python tests/corpus/report.py [--environment PATH] [--case NAME ...] [--rule CODE ...]``

Each project is a folder ``tests/corpus/<NNN-short-name>/`` with one or more ``.py`` files and an
``expected.json``::

    {"rules": ["FAB002", "FAB004"],
     "label": {"FAB002": "certain", "FAB004": "silent"},
     "findings": [{"file": "train.py", "code": "FAB002", "line": 12, "severity": "error",
                   "note": "fabric.py:867: save ends in barrier()"}],
     "note": {"FAB002": "why, citing Lightning's source", "FAB004": "..."},
     "source": {"repo": "owner/name", "path": "train.py", "commit": "...", "modelled": true}}

``rules`` lists the rules whose findings are fully labelled in the project (absent: ``["FAB001"]``);
a finding of any other rule is not judged there. ``label`` and ``note`` are one string (the same
for every labelled rule) or an object with one entry per labelled rule. ``label`` is one of
``certain|possible|guarded|unknown|silent``. ``line`` is 1-based; ``file`` is relative to the
project. ``source`` (optional) names the public code a project is modelled on.

A reported finding *matches* an expected one on (file, line, code); a match whose severity differs is
counted as a severity mismatch (still a true positive for precision/recall). The expectation is what
Lightning does (``shared/lightning-fabric-facts.md``, the Lightning 2.6.6 source), not what the
engine outputs.

``--environment`` is the analysed Python environment (a venv with or without ``lightning``); by
default none is given, and jedi falls back to the interpreter running this script.

This module is also the harness that ``tests/test_corpus.py`` imports.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parent
LABELS = ("certain", "possible", "guarded", "unknown", "silent")
SEVERITIES = ("error", "warning")
DEFAULT_RULES = ("FAB001",)
_CASE_DIR = re.compile(r"^\d{3}-[a-z0-9-]+$")
_RULE_CODE = re.compile(r"^FAB\d{3}$")

# (file relative to the project, code, 1-based line) → severity
Key = tuple[str, str, int]


@dataclass
class Case:
    name: str
    path: Path
    rules: tuple[str, ...]
    labels: dict[str, str]
    expected: dict[Key, str]
    notes: dict[str, str]
    finding_notes: dict[Key, str] = field(default_factory=dict)
    source: dict[str, Any] = field(default_factory=dict)

    def files(self) -> list[Path]:
        """The project's ``.py`` files and notebooks (``.ipynb``)."""
        found = [*self.path.rglob("*.py"), *self.path.rglob("*.ipynb")]
        return sorted(p for p in found if "__pycache__" not in p.parts and ".ipynb_checkpoints" not in p.parts)

    def label(self, rule: str) -> str:
        return self.labels[rule]

    def note(self, rule: str) -> str:
        return self.notes[rule]

    def expected_for(self, rule: str) -> dict[Key, str]:
        return {k: v for k, v in self.expected.items() if k[1] == rule}


@dataclass
class Outcome:
    """What the engine reported on one project, judged for one rule."""

    case: Case
    rule: str
    actual: dict[Key, str]
    messages: dict[Key, str] = field(default_factory=dict)

    @property
    def expected(self) -> dict[Key, str]:
        return self.case.expected_for(self.rule)

    @property
    def label(self) -> str:
        return self.case.label(self.rule)

    @property
    def matched(self) -> set[Key]:
        return set(self.expected) & set(self.actual)

    @property
    def missing(self) -> set[Key]:  # false negatives
        return set(self.expected) - set(self.actual)

    @property
    def extra(self) -> set[Key]:  # false positives
        return set(self.actual) - set(self.expected)

    @property
    def severity_mismatches(self) -> set[Key]:
        return {k for k in self.matched if self.expected[k] != self.actual[k]}

    @property
    def exact(self) -> bool:
        return self.expected == self.actual

    def describe(self) -> list[str]:
        name, expected = self.case.name, self.expected
        lines = [f"{name}: MISSING {k[1]} {k[0]}:{k[2]} (expected {expected[k]})" for k in sorted(self.missing)]
        for k in sorted(self.extra):
            lines.append(f"{name}: UNEXPECTED {k[1]} {k[0]}:{k[2]} {self.actual[k]}: {self.messages.get(k, '')}")
        for k in sorted(self.severity_mismatches):
            lines.append(
                f"{name}: SEVERITY {k[1]} {k[0]}:{k[2]} expected {expected[k]}, "
                f"got {self.actual[k]}: {self.messages.get(k, '')}"
            )
        return lines


def _per_rule(value: Any, rules: tuple[str, ...], what: str, name: str) -> dict[str, str]:
    """``label``/``note``: one string for every rule, or one entry per rule."""
    if isinstance(value, str):
        return dict.fromkeys(rules, value)
    if not isinstance(value, dict) or set(value) != set(rules):
        raise ValueError(f"{name}: `{what}` must be a string or have exactly one entry per rule {list(rules)}")
    return {rule: str(value[rule]) for rule in rules}


def _findings(spec: dict, rules: tuple[str, ...], name: str) -> tuple[dict[Key, str], dict[Key, str]]:
    expected: dict[Key, str] = {}
    notes: dict[Key, str] = {}
    for f in spec["findings"]:
        key = (f["file"], f["code"], int(f["line"]))
        if key in expected:
            raise ValueError(f"{name}: duplicate expected finding {key}")
        if f["code"] not in rules:
            raise ValueError(f"{name}: finding of {f['code']}, which is not in `rules` {list(rules)}")
        if f["severity"] not in SEVERITIES:
            raise ValueError(f"{name}: unknown severity {f['severity']!r}")
        expected[key] = f["severity"]
        if f.get("note"):
            notes[key] = f["note"]
    return expected, notes


def load_case(d: Path) -> Case:
    spec = json.loads((d / "expected.json").read_text(encoding="utf-8"))
    rules = tuple(spec.get("rules", DEFAULT_RULES))
    if not rules or len(set(rules)) != len(rules) or not all(_RULE_CODE.match(r) for r in rules):
        raise ValueError(f"{d.name}: bad `rules` {list(rules)}")
    labels = _per_rule(spec["label"], rules, "label", d.name)
    unknown = set(labels.values()) - set(LABELS)
    if unknown:
        raise ValueError(f"{d.name}: unknown label {sorted(unknown)}")
    expected, finding_notes = _findings(spec, rules, d.name)
    notes = _per_rule(spec.get("note", ""), rules, "note", d.name)
    return Case(d.name, d, rules, labels, expected, notes, finding_notes, spec.get("source", {}))


def load_cases(root: Path = CORPUS) -> list[Case]:
    return [load_case(d) for d in sorted(root.iterdir()) if d.is_dir() and _CASE_DIR.match(d.name)]


def analyse(case: Case, environment_path: str | None = None) -> tuple[dict[Key, str], dict[Key, str]]:
    """Every finding of every registered rule on every ``.py`` file, with a fresh workspace rooted at the project."""
    from fabric_lsp.engine import Analyzer
    from fabric_lsp.engine.workspace.workspace import Workspace
    from fabric_lsp.rules import ALL_RULES

    analyzer = Analyzer(Workspace(root=str(case.path), environment_path=environment_path), ALL_RULES)
    actual: dict[Key, str] = {}
    messages: dict[Key, str] = {}
    for file in case.files():
        text = file.read_text(encoding="utf-8")
        rel = file.relative_to(case.path).as_posix()
        for where, f in _file_findings(analyzer, text, file, rel):
            key = (where, f.code, f.span.start.line + 1)
            actual[key] = f.severity.value
            messages[key] = f.message
    return actual, messages


def _file_findings(analyzer, text: str, file: Path, rel: str) -> list[tuple[str, Any]]:
    """(where, finding) of one file; a notebook's findings are placed in cells, named as the
    CLI names them (``train.ipynb:cell 3``, lines of the cell)."""
    if file.suffix != ".ipynb":
        return [(rel, f) for f in analyzer.analyze(text, str(file))]
    from fabric_lsp.documents.notebook import NotebookFile

    nb = NotebookFile.parse(text)
    out = []
    for f in analyzer.analyze(nb.program.text, str(file)):
        placed = nb.program.to_cells(f)
        if placed is not None:
            out.append((f"{rel}:cell {placed.cell + 1}", placed.finding))
    return out


def judge(case: Case, rule: str, actual: dict[Key, str], messages: dict[Key, str]) -> Outcome:
    kept = {k: v for k, v in actual.items() if k[1] == rule}
    return Outcome(case, rule, kept, {k: messages[k] for k in kept if k in messages})


def run_case(case: Case, environment_path: str | None = None, rules=None) -> list[Outcome]:
    """One outcome per labelled rule of the project (only ``rules`` when given)."""
    actual, messages = analyse(case, environment_path)
    return [judge(case, rule, actual, messages) for rule in case.rules if rules is None or rule in rules]


def registered_rules() -> set[str]:
    from fabric_lsp.rules import RULES_BY_CODE

    return set(RULES_BY_CODE)


def _ratio(num: int, den: int) -> str:
    return f"{num / den:.3f}" if den else "  n/a"


def _row(group: list[Outcome]) -> dict[str, int]:
    return dict(
        cases=len(group),
        exact=sum(o.exact for o in group),
        expected=sum(len(o.expected) for o in group),
        found=sum(len(o.actual) for o in group),
        tp=sum(len(o.matched) for o in group),
        fp=sum(len(o.extra) for o in group),
        fn=sum(len(o.missing) for o in group),
        severity=sum(len(o.severity_mismatches) for o in group),
    )


_HEADER = (
    f"{'label':<9} {'cases':>5} {'exact':>5} {'expect':>6} {'found':>5} {'TP':>4} {'FP':>4} {'FN':>4} "
    f"{'sev≠':>4} {'precision':>9} {'recall':>7}"
)


def _format_row(label: str, r: dict[str, int]) -> str:
    return (
        f"{label:<9} {r['cases']:>5} {r['exact']:>5} {r['expected']:>6} {r['found']:>5} {r['tp']:>4} {r['fp']:>4} "
        f"{r['fn']:>4} {r['severity']:>4} {_ratio(r['tp'], r['tp'] + r['fp']):>9} "
        f"{_ratio(r['tp'], r['tp'] + r['fn']):>7}"
    )


def summarize_rule(rule: str, outcomes: list[Outcome], out) -> dict:
    """The per-label table of one rule, its overall figures and its severity-exact figures."""
    rows: dict[str, dict[str, int]] = {}
    print(_HEADER, file=out)
    print("-" * len(_HEADER), file=out)
    for label in LABELS:
        group = [o for o in outcomes if o.label == label]
        if group:
            rows[label] = _row(group)
            print(_format_row(label, rows[label]), file=out)
    rows["overall"] = overall = _row(outcomes)
    print("-" * len(_HEADER), file=out)
    print(_format_row("overall", overall), file=out)
    strict_tp = overall["tp"] - overall["severity"]
    print(
        f"severity-exact: precision {_ratio(strict_tp, overall['found'])}, "
        f"recall {_ratio(strict_tp, overall['expected'])}",
        file=out,
    )
    return rows


def _errors_on_non_raising(outcomes: list[Outcome]) -> list[tuple[str, Key]]:
    return [
        (o.case.name, k)
        for o in outcomes
        for k, sev in o.actual.items()
        if sev == "error" and o.expected.get(k) != "error"
    ]


def summarize(outcomes: list[Outcome], out=None, registered=None) -> dict[str, dict]:
    """Print one table per rule (per label, overall), the false errors and the mismatches; return the figures."""
    out = out or sys.stdout
    registered = registered_rules() if registered is None else registered
    figures: dict[str, dict] = {}
    for rule in sorted({o.rule for o in outcomes}):
        group = [o for o in outcomes if o.rule == rule]
        state = "" if rule in registered else "  (not registered: no findings expected from the engine yet)"
        print(f"\n== {rule}: {len({o.case.name for o in group})} projects{state}", file=out)
        figures[rule] = summarize_rule(rule, group, out)
    false_errors = _errors_on_non_raising(outcomes)
    print(f"\nerrors where Lightning does not certainly raise: {len(false_errors)}", file=out)
    for name, k in false_errors:
        print(f"  {name}: {k[1]} {k[0]}:{k[2]}", file=out)
    mismatches = [line for o in outcomes for line in o.describe()]
    print(f"\nmismatches ({len(mismatches)}):", file=out)
    for line in mismatches:
        print("  " + line, file=out)
    return figures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--environment", help="analysed Python environment (venv path)")
    parser.add_argument("--case", action="append", help="only these cases (name or prefix)")
    parser.add_argument("--rule", action="append", help="only these rules (e.g. FAB002)")
    args = parser.parse_args(argv)
    cases = load_cases()
    if args.case:
        cases = [c for c in cases if any(c.name.startswith(p) for p in args.case)]
    if args.rule:
        cases = [c for c in cases if set(c.rules) & set(args.rule)]
    env = args.environment
    print(f"fabric-lsp corpus: {len(cases)} projects, analysed environment: {env or 'none (no lightning)'}")
    outcomes = [o for c in cases for o in run_case(c, env, args.rule)]
    summarize(outcomes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
