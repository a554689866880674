"""Incremental analysis: a verdict reused from an earlier version is exactly what a fresh analysis
of the new version gives — under random edits that move, add, change and remove the statements
the verdicts depend on — and an edit inside one function recomputes only what depends on it."""

from __future__ import annotations

import textwrap

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric_lsp.engine import Analyzer
from fabric_lsp.engine.workspace import Workspace
from fabric_lsp.rules import ALL_RULES, RULES_BY_CODE

BASE = textwrap.dedent(
    '''
    import torch
    import lightning as L
    from lightning.fabric.strategies import DeepSpeedStrategy

    STRATEGY = "deepspeed"


    def make_fabric(kind):
        return L.Fabric(strategy=kind)


    def train_const(model):
        fabric = L.Fabric(strategy=STRATEGY)
        model = fabric.setup_module(model)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        optimizer = fabric.setup_optimizers(optimizer)


    def train_factory(model, optimizer):
        fabric = make_fabric("xla")
        model = fabric.setup_module(model)
        optimizer = fabric.setup_optimizers(optimizer)


    def train_guarded(model, optimizer):
        fabric = L.Fabric(strategy="deepspeed" if model else "ddp")
        if isinstance(fabric.strategy, DeepSpeedStrategy):
            model, optimizer = fabric.setup(model, optimizer)
        else:
            model = fabric.setup_module(model)
            optimizer = fabric.setup_optimizers(optimizer)


    def train_param(fabric, model, optimizer):
        model = fabric.setup_module(model)
        optimizer = fabric.setup_optimizers(optimizer)


    def main(model, optimizer):
        fabric = L.Fabric(strategy="ddp")
        fabric.launch(train_param, model, optimizer)


    class Trainer:
        def __init__(self):
            self.fabric = L.Fabric(strategy=STRATEGY)

        def fit(self, model, optimizer):
            model = self.fabric.setup_module(model)
            optimizer = self.fabric.setup_optimizers(optimizer)
    '''
).lstrip()

#: statements an edit may insert (at module level, or inside a function body)
TOP_SNIPPETS = [
    "",
    "# a comment",
    'STRATEGY = "ddp"',
    'STRATEGY = "xla"',
    "def make_fabric(kind):\n    return L.Fabric(strategy='ddp')",
    "def train_param(fabric, model, optimizer):\n    optimizer = fabric.setup_optimizers(optimizer)",
    "from lightning.fabric.strategies import DDPStrategy as DeepSpeedStrategy",
    "x = (",
]
BODY_SNIPPETS = ["    pass", "    fabric = L.Fabric()", "    STRATEGY = 'ddp'", "    global STRATEGY", "    tick = 1  # typed"]


def _edit(text: str, data) -> str:
    lines = text.split("\n")
    at = data.draw(st.integers(0, len(lines)), label="line")
    kind = data.draw(st.sampled_from(["top", "body", "delete", "replace"]), label="kind")
    if kind == "delete" and lines:
        del lines[min(at, len(lines) - 1)]
    elif kind == "replace" and lines:
        i = min(at, len(lines) - 1)
        lines[i] = lines[i].replace("deepspeed", "ddp").replace("xla", "deepspeed")
    else:
        snippet = data.draw(st.sampled_from(TOP_SNIPPETS if kind == "top" else BODY_SNIPPETS), label="snippet")
        lines[at:at] = snippet.split("\n")
    return "\n".join(lines)


def _observable(analysis):
    return [(v.code, v.span, v.finding, v.explanation) for v in analysis.verdicts]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_reused_verdicts_equal_a_fresh_analysis(data):
    incremental = Analyzer(Workspace(), ALL_RULES)
    text = BASE
    incremental.analysis(text, "/work/train.py")
    for _ in range(data.draw(st.integers(1, 6), label="edits")):
        text = _edit(text, data)
        got = incremental.analysis(text, "/work/train.py")
        fresh = Analyzer(Workspace(), ALL_RULES).analysis(text, "/work/train.py")
        assert _observable(got) == _observable(fresh), text
        assert got.findings == fresh.findings


def test_an_edit_inside_one_function_recomputes_only_that_function():
    analyzer = Analyzer(Workspace(), [RULES_BY_CODE["FAB001"]])  # the counts are FAB001's sites
    analyzer.analysis(BASE, "/work/train.py")
    before = dict(analyzer.stats)
    edited = BASE.replace("    optimizer = fabric.setup_optimizers(optimizer)\n\n\ndef train_guarded", "    optimizer = fabric.setup_optimizers(optimizer)\n    tick = 1\n\n\ndef train_guarded")
    assert edited != BASE
    analyzer.analysis(edited, "/work/train.py")
    computed = analyzer.stats["computed"] - before["computed"]
    reused = analyzer.stats["reused"] - before["reused"]
    assert computed == 1 and reused == 4, analyzer.stats
    # a change of the constant the other sites read recomputes exactly those
    analyzer.analysis(edited.replace('STRATEGY = "deepspeed"', 'STRATEGY = "ddp"'), "/work/train.py")
    assert analyzer.stats["computed"] - before["computed"] - computed == 2


def test_a_changed_module_elsewhere_recomputes_sites_that_read_it(tmp_path):
    (tmp_path / "config.py").write_text('STRATEGY = "ddp"\n')
    train = tmp_path / "train.py"
    text = "import lightning as L\nfrom config import STRATEGY\n\ndef fit(model, opt):\n    fabric = L.Fabric(strategy=STRATEGY)\n    model = fabric.setup_module(model)\n    opt = fabric.setup_optimizers(opt)\n"
    workspace = Workspace(str(tmp_path))
    analyzer = Analyzer(workspace, ALL_RULES)
    assert analyzer.analyze(text, str(train)) == []
    (tmp_path / "config.py").write_text('STRATEGY = "deepspeed"\n')
    workspace.invalidate(str(tmp_path / "config.py"))
    (finding,) = analyzer.analyze(text, str(train))
    assert finding.code == "FAB001"
