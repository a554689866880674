"""Output formats of `fabric-lsp check` (text, json, sarif, github), --output-file, --statistics,
--exit-zero, standard input, --jobs, the progress bar, and the rule documentation."""

from __future__ import annotations

import importlib.util
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from fabric_lsp.cli.output import FileResult, Report
from fabric_lsp.cli.output.github import render_github
from fabric_lsp.engine.findings import Finding, Severity, Span
from fabric_lsp.engine.rule import REQUIRED_SECTIONS
from fabric_lsp.rules import ALL_RULES, RULES_BY_CODE

REPO = Path(__file__).resolve().parents[2]
SARIF_SCHEMA = REPO / "tests" / "data" / "sarif-schema-2.1.0.json"

DEEPSPEED = """\
import torch
from lightning.fabric import Fabric

fabric = Fabric(strategy="deepspeed_stage_3")
fabric.launch()
model = torch.nn.Linear(4, 4)
model = fabric.setup_module(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)
"""
FIXED = """\
import torch
from lightning.fabric import Fabric

fabric = Fabric(strategy="deepspeed_stage_3")
fabric.launch()
model = torch.nn.Linear(4, 4)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
model, optimizer = fabric.setup(model, optimizer)
"""
MAYBE = DEEPSPEED.replace('strategy="deepspeed_stage_3"', 'strategy="deepspeed" if USE_DS else "ddp"')
# a separated setup whose fix is unsafe: no automatic edit for a used-in-between model
NOFIX = DEEPSPEED.replace("optimizer = torch.optim", "model(torch.randn(1, 4))\noptimizer = torch.optim")
CLEAN = 'from lightning.fabric import Fabric\n\nfabric = Fabric(strategy="fsdp")\nfabric.launch()\n'


def run(cwd: Path, *args: str, stdin: str | bytes | None = None, command: str = "check") -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1")
    env.pop("FABRIC_LSP_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "fabric_lsp", *([command] if command else []), *args],
        cwd=cwd,
        input=stdin.encode() if isinstance(stdin, str) else stdin,
        capture_output=True,
        timeout=180,
        env=env,
    )


def out(proc) -> str:
    return proc.stdout.decode()


def err(proc) -> str:
    return proc.stderr.decode()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    files = {
        "train.py": DEEPSPEED,
        "maybe.py": MAYBE,
        "clean.py": CLEAN,
        "nofix.py": NOFIX,
        "sub dir/ünï.py": DEEPSPEED,
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


# -- text and json ---------------------------------------------------------------------------------


def test_text_format(project):
    proc = run(project, "train.py")
    assert proc.returncode == 1
    text = out(proc)
    assert text.startswith("train.py:9:13: FAB001 [error] `fabric.setup_optimizers(...)` raises RuntimeError")
    assert "9 | optimizer = fabric.setup_optimizers(optimizer)\n" in text
    assert "  |             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n" in text
    assert "= help: Set up model and optimizer jointly" in text and "[fix with `--fix`]" in text
    assert "Found 1 problem (1 error) in 1 file. 1 fixable with `--fix`." in text


def test_json_format_keeps_the_foundation_schema(project):
    proc = run(project, "--format", "json")
    assert proc.returncode == 1
    findings = json.loads(out(proc))
    assert {f["filename"] for f in findings} == {"train.py", "maybe.py", "nofix.py", os.path.join("sub dir", "ünï.py")}
    f = next(f for f in findings if f["filename"] == "train.py")
    assert set(f) >= {"filename", "code", "message", "severity", "location", "end_location", "fix", "url"}
    assert f["location"] == {"row": 9, "column": 13} and f["end_location"] == {"row": 9, "column": 47}
    assert f["fix"]["applicability"] == "safe" and f["fix"]["edits"]
    assert f["url"].endswith("docs/rules/FAB001.md")
    assert next(f for f in findings if f["filename"] == "maybe.py")["severity"] == "warning"
    assert next(f for f in findings if f["filename"] == "nofix.py")["fix"] is None
    assert run(project, "--format", "json", "clean.py").returncode == 0


# -- sarif -----------------------------------------------------------------------------------------


def sarif_validator():
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    assert schema["id"].endswith("/sarif-schema-2.1.0.json")
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def assert_valid_sarif(log: dict) -> None:
    errors = sorted(sarif_validator().iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])


def test_sarif_validates_against_the_sarif_2_1_0_schema(project):
    proc = run(project, "--format", "sarif")
    assert proc.returncode == 1
    log = json.loads(out(proc))
    assert_valid_sarif(log)
    assert log["version"] == "2.1.0"
    run_ = log["runs"][0]
    assert run_["tool"]["driver"]["name"] == "fabric-lsp"
    assert [r["id"] for r in run_["tool"]["driver"]["rules"]] == [r.code for r in ALL_RULES]
    rule = run_["tool"]["driver"]["rules"][0]
    assert rule["help"]["markdown"] == RULES_BY_CODE["FAB001"].markdown()
    assert run_["columnKind"] == "unicodeCodePoints"
    assert run_["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.as_uri() + "/"
    results = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r for r in run_["results"]}
    assert set(results) == {"train.py", "maybe.py", "nofix.py", "sub%20dir/%C3%BCn%C3%AF.py"}
    train = results["train.py"]
    assert train["ruleId"] == "FAB001" and train["ruleIndex"] == 0 and train["level"] == "error"
    assert train["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    assert train["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 9,
        "startColumn": 13,
        "endLine": 9,
        "endColumn": 47,
    }
    assert {r["message"]["text"] for r in train["relatedLocations"]} >= {"Model set up separately here"}
    assert train["fixes"][0]["artifactChanges"][0]["replacements"]
    assert results["maybe.py"]["level"] == "warning"
    assert "fixes" not in results["nofix.py"]


def test_sarif_is_valid_without_findings_with_problems_stdin_and_outside_paths(project, tmp_path_factory):
    clean = run(project, "--format", "sarif", "clean.py")
    assert clean.returncode == 0
    log = json.loads(out(clean))
    assert_valid_sarif(log)
    assert log["runs"][0]["results"] == []

    (project / "bad.py").write_bytes(b"x = '\xff'\n")
    with_problem = run(project, "--format", "sarif", "bad.py", "train.py")
    log = json.loads(out(with_problem))
    assert_valid_sarif(log)
    notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert any("bad.py" in n["message"]["text"] and n["level"] == "error" for n in notes)

    stdin = run(project, "--format", "sarif", "-", stdin=DEEPSPEED)
    log = json.loads(out(stdin))
    assert_valid_sarif(log)
    assert log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "stdin"

    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "t.py").write_text(DEEPSPEED)
    outside = run(project, "--format", "sarif", str(elsewhere / "t.py"))
    log = json.loads(out(outside))
    assert_valid_sarif(log)
    loc = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc == {"uri": (elsewhere / "t.py").as_uri()}


def test_the_validator_catches_an_invalid_log():
    with pytest.raises(AssertionError):
        assert_valid_sarif({"version": "2.1.0", "runs": [{"tool": {"driver": {}}, "results": [{"level": "fatal"}]}]})


# -- github ----------------------------------------------------------------------------------------


def test_github_annotations(project):
    proc = run(project, "--format", "github", "train.py", "maybe.py", "clean.py")
    assert proc.returncode == 1
    lines = out(proc).splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(
        "::error file=train.py,line=9,col=13,endLine=9,endColumn=47,title=FAB001::`fabric.setup_optimizers(...)`"
    )
    assert lines[1].startswith(
        "::warning file=maybe.py,line=9,col=13,endLine=9,endColumn=47,title=FAB001::`fabric.setup_optimizers(...)`"
    )


def test_github_escaping_and_notice_levels():
    span = Span.of(0, 0, 0, 1)
    findings = [
        Finding("FAB001", Severity.HINT, "100% sure\nsecond line", span),
        Finding("FAB001", Severity.INFORMATION, "info", span),
    ]
    report = Report(results=[FileResult("/x/a,b:c.py", "a,b:c.py", findings=findings, checked=True)])
    lines = render_github(report).splitlines()
    assert (
        lines[0]
        == "::notice file=a%2Cb%3Ac.py,line=1,col=1,endLine=1,endColumn=2,title=FAB001::100%25 sure%0Asecond line"
    )
    assert lines[1].startswith("::notice ")


# -- --output-file, --statistics, --exit-zero ------------------------------------------------------


def test_output_file(project):
    target = project / "reports" / "fabric.sarif"
    proc = run(project, "--format", "sarif", "--output-file", str(target))
    assert proc.returncode == 1
    assert out(proc) == ""
    assert_valid_sarif(json.loads(target.read_text(encoding="utf-8")))
    bad = run(project, "--output-file", str(project / "train.py" / "x"))
    assert bad.returncode == 2 and "cannot write" in err(bad)


def test_statistics(project):
    proc = run(project, "--statistics")
    assert proc.returncode == 1
    lines = out(proc).splitlines()
    assert lines[0].split("\t")[:2] == ["4", "FAB001"]
    assert "[*] separated-setup-under-deepspeed-xla" in lines[0] and "(3 fixable, 3 safely)" in lines[0]
    assert "FAB001 [error]" not in out(proc)  # statistics replace the findings
    stats = json.loads(out(run(project, "--statistics", "--format", "json")))
    assert stats == [
        {"code": "FAB001", "name": "separated-setup-under-deepspeed-xla", "count": 4, "fixable": 3, "safe_fixable": 3}
    ]
    assert out(run(project, "--statistics", "clean.py")) == ""


def test_exit_zero(project):
    proc = run(project, "--exit-zero", "--format", "json")
    assert proc.returncode == 0 and len(json.loads(out(proc))) == 4
    assert run(project, "--exit-zero", "missing.py").returncode == 2  # usage errors still fail


# -- standard input --------------------------------------------------------------------------------


def test_stdin(project):
    proc = run(project, "--format", "json", "-", stdin=DEEPSPEED)
    assert proc.returncode == 1
    (f,) = json.loads(out(proc))
    assert f["filename"] == "-" and f["code"] == "FAB001"

    named = run(project, "--format", "json", "--stdin-filename", "pkg/train.py", stdin=DEEPSPEED)  # `-` implied
    assert json.loads(out(named))[0]["filename"] == os.path.join("pkg", "train.py")

    assert run(project, "-", stdin=CLEAN).returncode == 0
    bad = run(project, "-", stdin=b"\xff\xfe")
    assert bad.returncode == 2 and "not valid UTF-8" in err(bad)
    mixed = run(project, "-", "train.py", stdin=CLEAN)
    assert mixed.returncode == 2 and "cannot be combined" in err(mixed)


def test_stdin_fix_prints_fixed_source(project):
    proc = run(project, "--fix", "-", stdin=DEEPSPEED)
    assert proc.returncode == 0
    assert out(proc) == FIXED
    assert "Fixed 1 problem." in err(proc)
    diff = run(project, "--diff", "--stdin-filename", "t.py", "-", stdin=DEEPSPEED)
    assert diff.returncode == 1 and out(diff).startswith("--- a/t.py\n+++ b/t.py\n")


# -- --jobs and the progress bar -------------------------------------------------------------------


def test_jobs_give_the_same_results(project):
    (project / "many").mkdir()
    for i in range(36):
        (project / "many" / f"m{i:02}.py").write_text(DEEPSPEED if i % 3 else MAYBE)
    one = run(project, "--format", "json", "--jobs", "1", "--no-cache")
    two = run(project, "--format", "json", "--jobs", "2", "--no-cache")  # not from the first run's cache
    assert one.returncode == two.returncode == 1
    assert json.loads(out(one)) == json.loads(out(two))
    assert len(json.loads(out(two))) == 4 + 36
    assert run(project, "--jobs", "0").returncode == 2


@pytest.mark.parametrize("in_a_worker", [True, False])
def test_jobs_give_the_same_results_for_a_batch_script(tmp_path, in_a_worker):
    # a batch script checked in a worker leaves the finding to the Python file it launches, as
    # one checked in the main process does (the workers know which files the run checks); one no
    # rule's prefilter lets through is checked before the workers fork (by the process forked
    # before the walk, with --jobs 2)
    corpus = Path(__file__).resolve().parents[1] / "corpus" / "690-real-slurm-ddp-devices-mismatch"
    (tmp_path / "main.py").write_text((corpus / "main.py").read_text())
    script = (corpus / "slurm_submit.sh").read_text()
    # words a rule's prefilter looks for: the script goes to a worker with the modules
    words = "\n# fabric.launch(): devices, strategy\n" if in_a_worker else "\n"
    (tmp_path / "slurm_submit.sh").write_text(script.replace("\n", words, 1))
    for i in range(30):
        (tmp_path / f"m{i:02}.py").write_text(CLEAN)
    one = run(tmp_path, "--format", "json", "--jobs", "1", "--no-cache")
    two = run(tmp_path, "--format", "json", "--jobs", "2", "--no-cache")
    assert json.loads(out(one)) == json.loads(out(two))
    assert [(f["filename"], f["code"]) for f in json.loads(out(two))] == [("main.py", "FAB010")]


def test_jobs_use_worker_processes(project):
    for i in range(30):
        (project / f"p{i}.py").write_text(DEEPSPEED)
    env_debug = dict(os.environ, FABRIC_LSP_DEBUG="1", NO_COLOR="1")
    proc = subprocess.run(
        [sys.executable, "-m", "fabric_lsp", "check", "--fix", "--jobs", "2"],
        cwd=project,
        capture_output=True,
        timeout=180,
        env=env_debug,
    )
    assert "in 2 worker processes" in err(proc)
    assert proc.returncode == 1  # nofix.py has no automatic fix: it remains
    assert all((project / f"p{i}.py").read_text() == FIXED for i in range(30))
    assert (project / "sub dir" / "ünï.py").read_text(encoding="utf-8") == FIXED
    assert "Fixed 33 problems.\nFound 1 problem (1 error) in 35 files." in out(proc)
    few = run(project, "--jobs", "2", "train.py", "maybe.py")  # too few to start workers: same result
    assert few.returncode == 0


def run_with_tty_stderr(cwd: Path, *args: str) -> tuple[int, str, str]:
    master, slave = pty.openpty()
    env = dict(os.environ, NO_COLOR="1", COLUMNS="100")
    env.pop("FABRIC_LSP_NO_PROGRESS", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "fabric_lsp", "check", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=slave,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    stdout = proc.stdout.read().decode()
    code = proc.wait(timeout=180)
    os.close(master)
    return code, stdout, b"".join(chunks).decode(errors="replace")


def test_progress_bar_on_a_terminal_only_for_many_files(tmp_path):
    for i in range(320):
        (tmp_path / f"f{i:03}.py").write_text(f"x = {i}\n")
    code, stdout, tty = run_with_tty_stderr(tmp_path, "--jobs", "2")
    assert code == 0 and "All checks passed (320 files)" in stdout
    assert "fabric-lsp" in tty and "320" in tty and "file" in tty  # tqdm's bar: "fabric-lsp: 100%|...| 320/320"
    piped = run(tmp_path, "--jobs", "2")
    assert piped.returncode == 0 and err(piped) == ""
    for i in range(300, 320):
        (tmp_path / f"f{i:03}.py").unlink()
    code, stdout, tty = run_with_tty_stderr(tmp_path)
    assert code == 0 and tty == ""


# -- rule documentation ----------------------------------------------------------------------------


def _gen_rule_docs():
    spec = importlib.util.spec_from_file_location("gen_rule_docs", REPO / "scripts" / "gen_rule_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_rules_are_generated_from_the_rules():
    gen = _gen_rule_docs()
    pages = gen.generate()
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in (REPO / "docs" / "rules").glob("*.md")}
    assert set(on_disk) == set(pages), "run `python scripts/gen_rule_docs.py`"
    for name, content in pages.items():
        assert on_disk[name] == content, f"docs/rules/{name} is stale: run `python scripts/gen_rule_docs.py`"
    assert gen.main(["--check"]) == 0


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_every_rule_documents_the_required_sections(rule):
    gen = _gen_rule_docs()
    assert gen.missing_sections(rule) == []
    found = gen.sections(rule.markdown())
    assert [s for s in found if s in REQUIRED_SECTIONS] == list(REQUIRED_SECTIONS)  # in this order


def test_docs_check_fails_on_stale_or_incomplete_docs(tmp_path):
    gen = _gen_rule_docs()
    for name, content in gen.generate().items():
        (tmp_path / name).write_text(content)
    assert gen.main(["--check", str(tmp_path)]) == 0
    (tmp_path / "FAB001.md").write_text("# FAB001\n\nhand-edited\n")
    assert gen.main(["--check", str(tmp_path)]) == 1
    assert gen.main([str(tmp_path)]) == 0 and gen.main(["--check", str(tmp_path)]) == 0

    class Incomplete(type(ALL_RULES[0])):
        doc = "## What it does\nThings.\n\n```python\n## Example\n```\n"

    assert gen.missing_sections(Incomplete()) == [s for s in REQUIRED_SECTIONS if s != "What it does"]


def test_rule_command_prints_the_same_text(project):
    proc = run(project, "FAB001", command="rule")
    assert proc.returncode == 0
    assert out(proc) == (REPO / "docs" / "rules" / "FAB001.md").read_text(encoding="utf-8")
    listing = run(project, command="rules")
    assert listing.returncode == 0 and "FAB001" in out(listing) and "fix" in out(listing)
    assert run(project, "NOPE", command="rule").returncode == 2
