"""The labelled corpus (``tests/corpus/``): every project's findings must equal its ``expected.json``.

A project labels the findings of one or more rules (``"rules"`` in ``expected.json``, default
``["FAB001"]``). Each (project, labelled rule) pair is a test case when the rule is registered in
``fabric_lsp.rules.ALL_RULES``; labels of rules not written yet generate no case (they are being
written in parallel) and count only in ``report.py``.

Each case is analysed twice:

* ``no-lightning``: ``Workspace(root=<project>, environment_path=None)``: jedi falls back to the
  interpreter running the tests (the project venv, which has no ``lightning``);
* ``lightning``: the analysed environment is ``tests/.artifacts/venv-lightning``, a venv with
  ``lightning==2.6.6`` installed without dependencies (no torch: jedi only reads the source). The
  session fixture builds it when missing; under CI (``CI=true``) a failed build is a test failure,
  never a skip.

The expectation is what Lightning does (``shared/lightning-fabric-facts.md``, the 2.6.6 source), not
what the engine outputs today. Cases the engine gets wrong are listed in :data:`KNOWN_FAILURES` and
marked ``xfail(strict=True)``: once the engine is fixed they turn into failures, and the entry must go.
"""

from __future__ import annotations

import functools
import importlib.util
import io
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
CASES_BY_NAME = {c.name: c for c in CASES}
ENVIRONMENTS = ("no-lightning", "lightning")

#: Cases the engine gets wrong today (in both analysed environments): "<project>:<rule>" → what goes wrong.
# issue 13 shapes the engine does not handle yet (remove an entry when its shape is caught)

KNOWN_FAILURES: dict[str, str] = {
    "508-nb-fabric-in-forked-worker:FAB011": (
        "FAB011 does not follow a function handed to torch.multiprocessing: a Fabric built in a worker the "
        "notebook does not call itself is a warning, though a forked worker inherits _IS_INTERACTIVE"
    ),
    "656-real-easy-trainer-load-model-keyword:FAB006": (
        "FAB006 does not check the keywords of load/load_raw: fabric.load(path, model=...) and "
        "fabric.load_raw(path, model=...) raise TypeError (no `model` parameter) under every strategy"
    ),
    "657-real-dpo-embedding-fsdp-load-stage-without-model:FAB006": (
        "FAB006 misses fabric.save(path, model) (a module, not a state dict: AttributeError under every strategy) "
        "and the load of a stage {optimizer, scheduler, iter_num} without the model under the FSDP branch"
    ),
}

#: Cases the engine gets wrong in one analysed environment only.
KNOWN_FAILURES_BY_ENV: dict[str, dict[str, str]] = {"no-lightning": {}, "lightning": {}}

#: What the source line of an expected finding must call, per rule (a finding sits on the call it reports).
FINDING_CALLS: dict[str, tuple[str, ...]] = {
    "FAB001": ("setup_optimizers(",),
    # a Fabric collective, a call that reaches one through a helper, a torch.distributed collective,
    # or an implicit collective of a sharded model (`model(x)`, `generate_example(fabric, model, ...)`)
    "FAB002": ("(",),
    "FAB003": ("(",),  # the method call on the set-up model (any method name)
    "FAB004": (".backward(",),
    "FAB011": ("Fabric(", "fabric(", "Lite("),  # the Fabric(...) call, or the factory call that returns it
    # the offending argument's value, or the Fabric(...) call when the value is written elsewhere
    "FAB008": ("=", "Fabric("),
    "FAB006": ("save(", "load(", "load_raw("),
    "FAB009": ("setup(",),
    # the devices/num_nodes value in the Fabric(...) call, or the call (FAB010)
    "FAB010": ("=", "Fabric("),
    "FAB005": ("setup(", "backward(", "clip_gradients(", "init_module(", "no_backward_sync(", "setup_module("),
    "FAB007": (
        "launch(",
        "setup(",
        "setup_module(",
        "setup_optimizers(",
        "setup_dataloaders(",
        "barrier(",
        "broadcast(",
        "all_gather(",
        "all_reduce(",
        "init_module(",
        "sharded_model(",
        "save(",
        "load(",
        "run(",
    ),
}


def _case_key(case_name: str, rule: str) -> str:
    return f"{case_name}:{rule}"


def _labelled_registered() -> list[tuple[str, str]]:
    """(project, rule) for every labelled rule that is registered; rules being written are left out quietly."""
    registered = report.registered_rules()
    return [(c.name, rule) for c in CASES for rule in c.rules if rule in registered]


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


@functools.cache
def _analysis(case_name: str, environment_path):
    return report.analyse(CASES_BY_NAME[case_name], environment_path)


def _outcome(case_name: str, rule: str, environment_path) -> report.Outcome:
    actual, messages = _analysis(case_name, environment_path)
    return report.judge(CASES_BY_NAME[case_name], rule, actual, messages)


# --------------------------------------------------------------------------------------------
# The corpus itself
# --------------------------------------------------------------------------------------------


def _params():
    for env in ENVIRONMENTS:
        for name, rule in _labelled_registered():
            key = _case_key(name, rule)
            reason = KNOWN_FAILURES.get(key) or KNOWN_FAILURES_BY_ENV[env].get(key)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(env, name, rule, id=f"{env}-{name}-{rule}", marks=marks)


@pytest.mark.parametrize("env,case_name,rule", list(_params()))
def test_corpus_case(env, case_name, rule, environment_for):
    outcome = _outcome(case_name, rule, environment_for(env))
    case = outcome.case
    assert outcome.actual == outcome.expected, "\n".join(
        [f"{case_name} [{env}] {rule} ({case.label(rule)}): {case.note(rule)}", *outcome.describe()]
    )


def test_known_failures_name_real_cases():
    keys = {_case_key(c.name, rule) for c in CASES for rule in c.rules}
    listed = set(KNOWN_FAILURES) | {n for d in KNOWN_FAILURES_BY_ENV.values() for n in d}
    assert listed <= keys, f"KNOWN_FAILURES names no labelled (project, rule): {sorted(listed - keys)}"
    assert set(KNOWN_FAILURES_BY_ENV) == set(ENVIRONMENTS)


def _check_label(case, rule: str) -> None:
    label, expected = case.label(rule), case.expected_for(rule)
    severities = set(expected.values())
    where = f"{case.name} {rule}"
    if label == "certain":
        assert expected, f"{where}: a certain case expects findings"
        # errors, but for findings that are warnings by the rule's design (FAB005's no-op no_backward_sync,
        # FAB006's DeepSpeed key collision: Lightning only warns; FAB009's ModelParallel joint setup, which trains
        # nothing without an error)
        assert "error" in severities or rule in ("FAB005", "FAB006", "FAB009"), (
            f"{where}: a certain case expects errors"
        )
    if label in ("unknown", "silent"):
        assert not expected, f"{where}: an {label} case expects no finding"
    if label == "possible":
        assert "warning" in severities, f"{where}: a possible case expects a warning"
    assert case.note(rule).strip(), f"{where}: no note"


def _check_finding_line(case, files, key) -> None:
    file, code, line = key
    name, _, cell = file.partition(":cell ")  # a notebook's finding: "train.ipynb:cell 3"
    assert name in files, f"{case.name}: expected finding in missing file {name}"
    text = files[name].read_text(encoding="utf-8")
    if cell:
        from fabric_lsp.documents.notebook import NotebookFile

        text = NotebookFile.parse(text).cells[int(cell) - 1].text
    text = text.splitlines()
    assert 1 <= line <= len(text), f"{case.name}: {file}:{line} out of range"
    source = text[line - 1]
    assert not source.lstrip().startswith("#"), f"{case.name}: {file}:{line} is a comment"
    calls = FINDING_CALLS.get(code, ("(",))
    assert any(c in source for c in calls), f"{case.name}: {file}:{line} is not a {code} site ({calls}): {source!r}"


def test_corpus_shape():
    """At least 60 FAB001 projects, every label present, every expectation well formed."""
    fab001 = [c for c in CASES if "FAB001" in c.rules]
    assert len(fab001) >= 60
    assert {c.label("FAB001") for c in fab001} == set(report.LABELS)
    for case in CASES:
        files = {f.relative_to(case.path).as_posix(): f for f in case.files()}
        assert files, f"{case.name}: no .py or .ipynb file"
        for rule in case.rules:
            _check_label(case, rule)
        for key in case.expected:
            _check_finding_line(case, files, key)


def test_real_code_corpora_per_rule():
    """Issues 14/15: at least 20 projects modelled on public code for each rule of parts 1 and 2, each naming its source."""
    for rule in ("FAB002", "FAB003", "FAB004", "FAB005", "FAB006", "FAB007", "FAB009", "FAB010"):
        real = [c for c in CASES if rule in c.rules and c.source]
        assert len(real) >= 20, f"{rule}: {len(real)} projects from public code"
        for case in real:
            named = (case.source.get("repo") and case.source.get("path")) or case.source.get("id")
            assert named, f"{case.name}: a source names a repository and path, or a public code index id"


def test_default_environment_has_no_lightning():
    """The ``no-lightning`` leg means something only if jedi's fallback interpreter lacks lightning."""
    from fabric_lsp.engine.workspace.workspace import Workspace

    ws = Workspace(root=str(CORPUS / CASES[0].name), environment_path=None)
    assert ws.find_module_path("lightning.fabric.strategies.deepspeed", None) is None


def test_lightning_environment_is_seen_by_jedi(lightning_environment):
    from fabric_lsp.engine.workspace.workspace import Workspace

    ws = Workspace(root=str(CORPUS / CASES[0].name), environment_path=lightning_environment)
    path = ws.find_module_path("lightning.fabric.strategies.deepspeed", None)
    assert path is not None and Path(path).resolve().is_relative_to(Path(lightning_environment).resolve()), path


def test_report_script_prints_figures(capsys):
    assert report.main(["--case", CASES[0].name]) == 0
    out = capsys.readouterr().out
    assert "== FAB001" in out
    assert "precision" in out and "recall" in out and "overall" in out and "mismatches" in out


def test_report_counts_per_rule(tmp_path):
    """A finding of one rule never counts for another; an unlabelled rule's findings are not judged."""
    case = report.Case(
        "900-x",
        tmp_path,
        ("FAB001", "FAB002"),
        {"FAB001": "silent", "FAB002": "certain"},
        {("t.py", "FAB002", 3): "error"},
        {"FAB001": "n", "FAB002": "n"},
    )
    actual = {("t.py", "FAB002", 3): "error", ("t.py", "FAB004", 5): "error", ("t.py", "FAB001", 9): "warning"}
    fab001, fab002 = (report.judge(case, rule, actual, {}) for rule in case.rules)
    assert fab002.exact and fab002.matched == {("t.py", "FAB002", 3)}
    assert not fab001.exact and fab001.extra == {("t.py", "FAB001", 9)}
    out = io.StringIO()
    figures = report.summarize([fab001, fab002], out=out, registered={"FAB001"})
    assert figures["FAB002"]["overall"]["tp"] == 1 and figures["FAB001"]["overall"]["fp"] == 1
    assert "FAB004" not in figures and "not registered" in out.getvalue()


def test_expected_json_format_is_checked(tmp_path):
    d = tmp_path / "901-bad"
    d.mkdir()
    (d / "expected.json").write_text(
        '{"rules": ["FAB002"], "label": "certain", "findings": '
        '[{"file": "t.py", "code": "FAB004", "line": 1, "severity": "error"}], "note": "n"}'
    )
    with pytest.raises(ValueError, match="not in `rules`"):
        report.load_case(d)
    (d / "expected.json").write_text('{"rules": ["FAB002", "FAB004"], "label": {"FAB002": "certain"}, "findings": []}')
    with pytest.raises(ValueError, match="one entry per rule"):
        report.load_case(d)


def _hover_params():
    for case in CASES:
        if case.expected_for("FAB001"):
            reason = KNOWN_FAILURES.get(_case_key(case.name, "FAB001"))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(case.name, id=case.name, marks=marks)


@pytest.mark.parametrize("case_name", list(_hover_params()))
def test_hover_explains_every_finding(case_name):
    """Hovering the receiver of every expected FAB001 finding explains the strategy that raises."""
    from fabric_lsp.engine import Analyzer
    from fabric_lsp.engine.findings import Pos
    from fabric_lsp.engine.workspace.workspace import Workspace
    from fabric_lsp.rules import ALL_RULES

    case = CASES_BY_NAME[case_name]
    analyzer = Analyzer(Workspace(root=str(case.path)), ALL_RULES)
    for (file, _code, line), severity in case.expected_for("FAB001").items():
        path = case.path / file
        text = path.read_text(encoding="utf-8")
        source_line = text.splitlines()[line - 1]
        col = source_line.index("setup_optimizers(") - 2  # on the receiver, just before `.setup_optimizers`
        explanation = analyzer.analysis(text, str(path)).hover(Pos(line - 1, col))
        assert explanation, f"{case_name}: no hover at {file}:{line}"
        assert "DeepSpeed" in explanation or "XLA" in explanation, explanation
        verdict = "certainly" if severity == "error" else "possibly"
        assert verdict in explanation, f"{case_name} {file}:{line}: {explanation}"
