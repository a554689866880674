"""The labelled corpus (``tests/corpus/``): every project's findings must equal its ``expected.json``.

Each project is analysed twice:

* ``no-lightning``: ``Workspace(root=<project>, environment_path=None)``: jedi falls back to the
  interpreter running the tests (the project venv, which has no ``lightning``);
* ``lightning``: the analysed environment is ``tests/.artifacts/venv-lightning``, a venv with
  ``lightning==2.6.6`` installed without dependencies (no torch: jedi only reads the source). The
  session fixture builds it when missing; under CI (``CI=true``) a failed build is a test failure,
  never a skip.

The expectation is what Lightning does (``shared/lightning-fabric-facts.md``), not what the engine
outputs today. Cases the engine gets wrong are listed in :data:`KNOWN_FAILURES` and marked
``xfail(strict=True)``: once the engine is fixed they turn into failures, and the entry must go.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
CORPUS = TESTS / "corpus"
LIGHTNING_VENV = TESTS / ".artifacts" / "venv-lightning"
LIGHTNING_VERSION = "2.6.6"
BUILD_TIMEOUT = 600

_spec = importlib.util.spec_from_file_location("fabric_lsp_corpus_report", CORPUS / "report.py")
report = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = report  # dataclasses look their module up by name
_spec.loader.exec_module(report)

CASES = report.load_cases(CORPUS)
ENVIRONMENTS = ("no-lightning", "lightning")

#: Cases the engine gets wrong today (in both analysed environments): name → what goes wrong.
KNOWN_FAILURES: dict[str, str] = {}

#: Cases the engine gets wrong in one analysed environment only.
KNOWN_FAILURES_BY_ENV: dict[str, dict[str, str]] = {"no-lightning": {}, "lightning": {}}


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes", "on")


# --------------------------------------------------------------------------------------------
# The analysed environment with lightning
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def lightning_environment(lightning_env) -> str:
    """Path of a venv whose site-packages hold lightning (``tests/conftest.py`` builds it once)."""
    return str(lightning_env)


@pytest.fixture(scope="session")
def environment_for(request):
    def get(name: str):
        if name == "lightning":
            return request.getfixturevalue("lightning_environment")
        return None

    return get


@functools.lru_cache(maxsize=None)
def _outcome(case_name: str, environment_path):
    case = next(c for c in CASES if c.name == case_name)
    return report.run_case(case, environment_path)


# --------------------------------------------------------------------------------------------
# The corpus itself
# --------------------------------------------------------------------------------------------


def _params():
    for env in ENVIRONMENTS:
        for case in CASES:
            reason = KNOWN_FAILURES.get(case.name) or KNOWN_FAILURES_BY_ENV[env].get(case.name)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(env, case.name, id=f"{env}-{case.name}", marks=marks)


@pytest.mark.parametrize("env,case_name", list(_params()))
def test_corpus_case(env, case_name, environment_for):
    outcome = _outcome(case_name, environment_for(env))
    assert outcome.actual == outcome.case.expected, "\n".join(
        [f"{case_name} [{env}] ({outcome.case.label}): {outcome.case.note}", *outcome.describe()]
    )


def test_known_failures_name_real_cases():
    names = {c.name for c in CASES}
    listed = set(KNOWN_FAILURES) | {n for d in KNOWN_FAILURES_BY_ENV.values() for n in d}
    assert listed <= names, f"KNOWN_FAILURES names no corpus project: {sorted(listed - names)}"
    assert set(KNOWN_FAILURES_BY_ENV) == set(ENVIRONMENTS)


def test_corpus_shape():
    """At least 60 projects, every label present, every expectation well formed."""
    assert len(CASES) >= 60
    assert {c.label for c in CASES} == set(report.LABELS)
    for case in CASES:
        files = {f.relative_to(case.path).as_posix(): f for f in case.files()}
        assert files, f"{case.name}: no .py file"
        assert case.note.strip(), f"{case.name}: no note"
        severities = set(case.expected.values())
        assert severities <= {"error", "warning"}, case.name
        if case.label == "certain":
            assert case.expected and severities == {"error"}, f"{case.name}: a certain case expects errors only"
        if case.label in ("unknown", "silent"):
            assert not case.expected, f"{case.name}: an {case.label} case expects no finding"
        if case.label == "possible":
            assert "warning" in severities, f"{case.name}: a possible case expects a warning"
        for (file, code, line), _ in case.expected.items():
            assert code == "FAB001", case.name
            assert file in files, f"{case.name}: expected finding in missing file {file}"
            text = files[file].read_text(encoding="utf-8").splitlines()
            assert 1 <= line <= len(text), f"{case.name}: {file}:{line} out of range"
            assert "setup_optimizers(" in text[line - 1] and not text[line - 1].lstrip().startswith("#"), (
                f"{case.name}: {file}:{line} is not a setup_optimizers call: {text[line - 1]!r}"
            )


def test_default_environment_has_no_lightning():
    """The ``no-lightning`` leg means something only if jedi's fallback interpreter lacks lightning."""
    from fabric_lsp.engine.workspace import Workspace

    ws = Workspace(root=str(CORPUS / CASES[0].name), environment_path=None)
    assert ws.find_module_path("lightning.fabric.strategies.deepspeed", None) is None


def test_lightning_environment_is_seen_by_jedi(lightning_environment):
    from fabric_lsp.engine.workspace import Workspace

    ws = Workspace(root=str(CORPUS / CASES[0].name), environment_path=lightning_environment)
    path = ws.find_module_path("lightning.fabric.strategies.deepspeed", None)
    assert path is not None and Path(path).resolve().is_relative_to(Path(lightning_environment).resolve()), path


def test_report_script_prints_figures(capsys):
    assert report.main(["--case", CASES[0].name]) == 0
    out = capsys.readouterr().out
    assert "precision" in out and "recall" in out and "overall" in out and "mismatches" in out


@pytest.mark.parametrize("case_name", [c.name for c in CASES if c.expected])
def test_hover_explains_every_finding(case_name):
    """Hovering the receiver of every expected finding explains the strategy that raises."""
    from fabric_lsp.engine import Analyzer
    from fabric_lsp.rules import ALL_RULES
    from fabric_lsp.engine.model import Pos
    from fabric_lsp.engine.workspace import Workspace

    case = next(c for c in CASES if c.name == case_name)
    analyzer = Analyzer(Workspace(root=str(case.path)), ALL_RULES)
    for (file, _code, line), severity in case.expected.items():
        path = case.path / file
        text = path.read_text(encoding="utf-8")
        source_line = text.splitlines()[line - 1]
        col = source_line.index("setup_optimizers(") - 2  # on the receiver, just before `.setup_optimizers`
        explanation = analyzer.analysis(text, str(path)).hover(Pos(line - 1, col))
        assert explanation, f"{case_name}: no hover at {file}:{line}"
        assert "DeepSpeed" in explanation or "XLA" in explanation, explanation
        verdict = "certainly" if severity == "error" else "possibly"
        assert verdict in explanation, f"{case_name} {file}:{line}: {explanation}"
