"""Property-based test of PL004's fixes: random programs mixing removed Trainer flags (literal and
not), `load_from_checkpoint` on instances (statements, assignments, nested) and epoch-end hooks
(outputs used or not, annotations, trailing commas); every fix offered parses, removes its own
finding and adds none, keeps every other statement, and fixing again changes nothing."""

from __future__ import annotations

import ast

from fabric_lsp.engine.analyzer import Analyzer
from fabric_lsp.engine.fixer import fix_text
from fabric_lsp.engine.python.text import apply_edits
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import RULES_BY_CODE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ANALYZER = Analyzer(Workspace(), [RULES_BY_CODE["PL004"]])

GPUS = ["0", "None", "1", "-1", "[0, 1]", "(2,)", "n_gpus", "'0,1'", "True"]
EXTRA = ["", ", max_epochs=3", ", accelerator='cuda'", ", devices=2", ", **cfg", ", precision=16"]
HOOKS = ["training_epoch_end", "validation_epoch_end", "test_epoch_end"]
PARAMS = ["self, outputs", "self, outputs,", "self: 'Model', outputs: list", "self", "self, outs"]
BODIES = ["pass", "print(outputs)", "self.log('x', 1.0)", "return None"]
LOADS = [
    "model.load_from_checkpoint(path)",
    "best = model.load_from_checkpoint(path)",
    "print(model.load_from_checkpoint(path))",
    "holder.model.load_from_checkpoint(path, strict=False)",
]


@st.composite
def programs(draw):
    lines = [
        "import lightning as L",
        "from lightning.pytorch import Trainer",
        "",
        "",
        "class Model(L.LightningModule):",
    ]
    hooks = draw(st.lists(st.sampled_from(HOOKS), max_size=3, unique=True))
    for hook in hooks:
        lines += [f"    def {hook}({draw(st.sampled_from(PARAMS))}):", f"        {draw(st.sampled_from(BODIES))}", ""]
    if not hooks:
        lines.append("    pass")
    lines += ["", "", "model = Model()", "holder.model = Model()"]
    for _ in range(draw(st.integers(0, 2))):
        lines.append(f"trainer = Trainer(gpus={draw(st.sampled_from(GPUS))}{draw(st.sampled_from(EXTRA))})")
    lines += draw(st.lists(st.sampled_from(LOADS), max_size=2))
    if draw(st.booleans()):
        lines.append("trainer.fit(model)")
    sep = draw(st.sampled_from(["\n", "\r\n"]))
    return sep.join(lines) + sep


def _statements(text: str) -> int:
    return sum(1 for _ in ast.walk(ast.parse(text)) if isinstance(_, ast.stmt))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_every_pl004_fix_parses_and_removes_only_its_finding(source):
    findings = ANALYZER.analyze(source)
    for finding in findings:
        if finding.fix is None:
            continue
        fixed = apply_edits(source, list(finding.fix.edits))
        ast.parse(fixed)  # parses
        after = ANALYZER.analyze(fixed)
        # its own finding is gone and none appears at another line (the fixes add no line), but
        # for a hook: a fix that rebinds a name (`model = Model.load_from_checkpoint(p)`) may
        # hide which class a later `trainer.fit(model)` runs, and an unseen entry point makes
        # a hook on the class a warning
        lines = [f.span.start.line for f in findings]
        lines.remove(finding.span.start.line)
        hooks = {i for i, line in enumerate(fixed.splitlines()) if "_epoch_end(" in line and "def " in line}
        assert finding.span.start.line not in [f.span.start.line for f in after if f.message == finding.message]
        assert all(f.span.start.line in lines or f.span.start.line in hooks for f in after), (source, fixed)
        assert _statements(fixed) == _statements(source)
        if "\r\n" in source:
            assert "\n" not in fixed.replace("\r\n", "")
    once = fix_text(source, ANALYZER).text
    assert fix_text(once, ANALYZER).text == once
