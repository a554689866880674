"""Fix tests: `tests/fixtures/fixes/<name>.in.py` → `<name>.out.py`.

The first line of each input says the expected applicability (`safe`, `unsafe` or `none`); an
input without an `.out.py` must get FAB001 with no edit, and an optional second line
`# reason: ...` gives text the message must hold after "No automatic fix:". Every fix must parse, re-check clean,
and be idempotent. The rules' own VALID/INVALID examples run here too.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from fabric_lsp.engine import Analyzer
from fabric_lsp.engine.fixer import fix_text
from fabric_lsp.engine.python.text import apply_edits
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import ALL_RULES, RULES_BY_CODE

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "fixes"
CASES = sorted(p.name[: -len(".in.py")] for p in FIXTURES.glob("*.in.py"))


def read(path: Path) -> str:
    return path.read_bytes().decode("utf-8")  # keep CRLF as it is


def _expected_reason(source: str) -> str:
    """The text the message must give after "No automatic fix:" (second line ``# reason: ...``)."""
    second = source.splitlines()[1]
    return second.split(":", 1)[1].strip() if second.startswith("# reason:") else ""


@pytest.mark.parametrize("name", CASES)
def test_fix_fixture(name, analysed_env):
    source = read(FIXTURES / f"{name}.in.py")
    expected_applicability = source.splitlines()[0].split(":", 1)[1].strip()
    # FAB001's fixtures (other rules, e.g. FAB007's missing launch, may also apply to them)
    analyzer = Analyzer(Workspace(None, analysed_env), [RULES_BY_CODE["FAB001"]])
    findings = analyzer.analyze(source)
    assert findings and {f.code for f in findings} == {"FAB001"}, findings
    out = FIXTURES / f"{name}.out.py"
    if expected_applicability == "none":
        assert not out.exists()
        reason = _expected_reason(source)
        for finding in findings:
            assert finding.fix is None
            assert "No automatic fix:" in finding.message
            assert reason in finding.message.split("No automatic fix:", 1)[1], finding.message
        return
    for finding in findings:
        assert finding.fix is not None, finding.message
        assert finding.fix.applicability.value == expected_applicability
    if len(findings) == 1:
        fixed = apply_edits(source, findings[0].fix.edits)
    else:  # several findings: all their fixes, as --fix applies them
        fixed = fix_text(source, analyzer, unsafe=expected_applicability == "unsafe").text
    assert fixed == read(out)
    ast.parse(fixed)
    assert analyzer.analyze(fixed) == []
    # idempotent: fixing the fixed text changes nothing
    assert fix_text(fixed, analyzer, unsafe=True).text == fixed


def test_fix_all_applies_only_safe_fixes():
    analyzer = Analyzer(Workspace(), ALL_RULES)
    source = read(FIXTURES / "discarded_optimizer.in.py")
    assert fix_text(source, analyzer).text == source
    assert fix_text(source, analyzer, unsafe=True).text == read(FIXTURES / "discarded_optimizer.out.py")


EXAMPLES = [(r.code, "valid", e) for r in ALL_RULES for e in r.valid] + [
    (r.code, "invalid", e) for r in ALL_RULES for e in r.invalid
]


@pytest.mark.parametrize("code, kind, example", EXAMPLES, ids=[f"{c}-{k}-{e.title}" for c, k, e in EXAMPLES])
def test_rule_examples(code, kind, example, tmp_path):
    path = example.path
    if example.files:  # the example's workspace: the files beside it
        for name, text in example.files:
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text(textwrap.dedent(text).lstrip("\n"))
        path = str(tmp_path / (example.path or "train.py"))
        Path(path).write_text(example.source)
    analyzer = Analyzer(Workspace(str(tmp_path) if example.files else None), ALL_RULES)
    findings = [f for f in analyzer.analyze(example.source, path) if f.code == code]
    if kind == "valid":
        assert findings == []
        return
    assert len(findings) == 1
    assert findings[0].severity == example.severity
    if example.fixed_source is None:  # an invalid example without `fixed` gets no fix
        assert findings[0].fix is None, findings[0].fix
        return
    assert findings[0].fix is not None
    assert apply_edits(example.source, findings[0].fix.edits) == example.fixed_source


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_rule_documentation_has_every_section(rule):
    from fabric_lsp.engine.rule import REQUIRED_SECTIONS

    doc = rule.markdown()
    for section in REQUIRED_SECTIONS:
        assert f"## {section}\n" in doc, f"{rule.code} lacks '{section}'"


TRAIN_WITH_HELPER = """\
import torch
from lightning.fabric import Fabric
from models import build

fabric = Fabric(strategy="fsdp" if sharded else "deepspeed_stage_3")
fabric.launch()
model = build(fabric)
model = fabric.setup_module(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)
"""


@pytest.mark.parametrize("empty_init, fixable", [("True", False), ("False", True)])
def test_meta_device_model_built_in_another_module(tmp_path, empty_init, fixable):
    """A helper in another module of the project builds the model under init_module(empty_init=True):
    the FSDP branch would break under the rewrite, so there is no fix; with empty_init=False there is."""
    (tmp_path / "models.py").write_text(
        "import torch\n\n\ndef build(fabric):\n"
        f"    with fabric.init_module(empty_init={empty_init}):\n        return torch.nn.Linear(4, 2)\n"
    )
    train = tmp_path / "train.py"
    train.write_text(TRAIN_WITH_HELPER)
    [finding] = Analyzer(Workspace(str(tmp_path)), ALL_RULES).analyze(TRAIN_WITH_HELPER, str(train))
    if fixable:
        assert finding.fix is not None and finding.fix.applicability.value == "safe"
    else:
        assert finding.fix is None
        assert "meta device (`fabric.init_module(empty_init=True)` in models.py)" in finding.message
        [where] = [r for r in finding.related if "meta device" in r.message]
        assert (where.path, where.span.start.line) == (str(tmp_path / "models.py"), 4)
