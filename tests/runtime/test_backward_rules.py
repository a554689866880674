"""Runtime proof for FAB004 and FAB005 (the rules' side): every INVALID script of
``rules/FAB004`` and ``rules/FAB005`` (the CPU reproductions of the runtime suite) is flagged with
the severity its failure deserves, its fixed / valid forms are not flagged, and where the rule has
a fix ``fabric-lsp check --fix`` turns the INVALID script into one that runs (``RUNTIME-OK``).

The scripts come from the runtime suite (``tests/runtime/rules``, see its README); this module
reads whatever cases are there.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytestmark = [pytest.mark.runtime, pytest.mark.timeout(1500)]

RULES_DIR = Path(__file__).resolve().parent / "rules"
#: INVALID scripts whose failure is only a warning from Lightning (the script runs on)
WARNS = {"FAB005/no_backward_sync"}


def _invalid_scripts() -> list[Path]:
    out = []
    for rule in ("FAB004", "FAB005"):
        out += sorted(p for p in (RULES_DIR / rule).glob("*.py") if p.name.count(".") == 1)
    return out


INVALID = _invalid_scripts()


def _findings(fabric_lsp, script: Path, rule: str) -> list[dict]:
    run = fabric_lsp("check", "--format", "json", "--exit-zero", "--select", rule, str(script), cwd=script.parent)
    assert run.returncode == 0, run.explain()
    return json.loads(run.stdout or "[]")


def _case(script: Path) -> str:
    return f"{script.parent.name}/{script.stem}"


@pytest.mark.parametrize("script", INVALID, ids=_case)
def test_invalid_script_is_flagged(script: Path, fabric_lsp):
    rule = script.parent.name
    findings = [f for f in _findings(fabric_lsp, script, rule) if f["code"] == rule]
    assert findings, f"{_case(script)}: not flagged"
    expected = "warning" if _case(script) in WARNS else "error"
    assert findings[0]["severity"] == expected, findings[0]
    for kind in ("fixed", "valid"):
        form = script.with_name(f"{script.stem}.{kind}.py")
        if form.exists():
            assert [f for f in _findings(fabric_lsp, form, rule) if f["code"] == rule] == [], form.name


@pytest.mark.parametrize("script", [s for s in INVALID if s.with_name(f"{s.stem}.fixed.py").exists()], ids=_case)
def test_fix_gives_a_script_that_runs(script: Path, tmp_path: Path, fabric_lsp, run_script):
    copy = tmp_path / script.name
    shutil.copy(script, copy)
    run = fabric_lsp("check", "--fix", "--select", script.parent.name, str(copy), cwd=tmp_path)
    assert run.returncode == 0, run.explain()
    assert copy.read_text() != script.read_text(), "no fix applied"
    ran = run_script(copy)
    assert ran.returncode == 0 and "RUNTIME-OK" in ran.stdout, ran.explain()
