"""Incremental analysis: a verdict reused from an earlier version is exactly what a fresh analysis
of the new version gives — under random edits that move, add, change and remove the statements
the verdicts depend on — and an edit inside one function recomputes only what depends on it."""

from __future__ import annotations

import ast
import textwrap

from fabric_lsp.engine import Analyzer
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import ALL_RULES, RULES_BY_CODE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

BASE = textwrap.dedent(
    """
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


    GLOBAL_FABRIC = L.Fabric(strategy="deepspeed_stage_2", devices=2)


    def gan(generator, critic, batch):
        fabric = L.Fabric(strategy=STRATEGY, devices=2)
        generator = fabric.setup_module(generator)
        critic = fabric.setup_module(critic)
        fabric.launch()
        loss = critic(generator(batch)).mean()
        fabric.backward(loss)


    def model_only(model):
        model = GLOBAL_FABRIC.setup_module(model)
        return model


    def optimizers_elsewhere(optimizer):
        return GLOBAL_FABRIC.setup_optimizers(optimizer)
    """
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
BODY_SNIPPETS = [
    "    pass",
    "    fabric = L.Fabric()",
    "    STRATEGY = 'ddp'",
    "    global STRATEGY",
    "    tick = 1  # typed",
    "    fabric.launch()",
    "    GLOBAL_FABRIC.launch()",
    "    critic = fabric.setup_module(critic)",
    "    fabric.backward(loss)",
    "    optimizer = GLOBAL_FABRIC.setup_optimizers(optimizer)",
]


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
    analyzer = Analyzer(Workspace(), [RULES_BY_CODE["FAB001"]])  # counts FAB001's sites
    analyzer.analysis(BASE, "/work/train.py")
    before = dict(analyzer.stats)
    edited = BASE.replace(
        "    optimizer = fabric.setup_optimizers(optimizer)\n\n\ndef train_guarded",
        "    optimizer = fabric.setup_optimizers(optimizer)\n    tick = 1\n\n\ndef train_guarded",
    )
    assert edited != BASE
    analyzer.analysis(edited, "/work/train.py")
    computed = analyzer.stats["computed"] - before["computed"]
    reused = analyzer.stats["reused"] - before["reused"]
    # the edited function's site, and the one on the module-level GLOBAL_FABRIC (its verdict
    # reads every `setup_module` of the document, the edited function's included)
    assert computed == 2 and reused == 4, analyzer.stats
    # a change of the constant the other sites read recomputes exactly those
    analyzer.analysis(edited.replace('STRATEGY = "deepspeed"', 'STRATEGY = "ddp"'), "/work/train.py")
    assert analyzer.stats["computed"] - before["computed"] - computed == 2


def test_a_changed_module_elsewhere_recomputes_sites_that_read_it(tmp_path):
    (tmp_path / "config.py").write_text('STRATEGY = "ddp"\n')
    train = tmp_path / "train.py"
    text = "import lightning as L\nfrom config import STRATEGY\n\ndef fit(model, opt):\n    fabric = L.Fabric(strategy=STRATEGY)\n    model = fabric.setup_module(model)\n    opt = fabric.setup_optimizers(opt)\n"
    workspace = Workspace(str(tmp_path))
    analyzer = Analyzer(workspace, [RULES_BY_CODE["FAB001"]])  # counts FAB001's sites
    assert analyzer.analyze(text, str(train)) == []
    (tmp_path / "config.py").write_text('STRATEGY = "deepspeed"\n')
    workspace.invalidate(str(tmp_path / "config.py"))
    (finding,) = analyzer.analyze(text, str(train))
    assert finding.code == "FAB001"


TRAINING = textwrap.dedent(
    """

    def train_{i}(model, data, lr=0.1):
        fabric = L.Fabric(strategy="deepspeed", devices=2)
        fabric.launch()
        model = fabric.setup_module(model)
        optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
        optimizer = fabric.setup_optimizers(optimizer)
        for batch in data:
            loss = model(batch).sum()
            fabric.backward(loss)
            optimizer.step()
    """
)


def _sites_by_function(analysis) -> dict[str, int]:
    """How many sites every rule judges inside each function of the document."""
    model = analysis.model
    out: dict[str, int] = {}
    for rule in analysis.rules:
        for site in rule.sites(model):
            top = model.module.top_for_line(site.lineno)
            out[top.name] = out.get(top.name, 0) + 1
    return out


def test_with_every_rule_an_edit_inside_one_function_recomputes_only_that_function():
    """Rules whose verdicts read other calls of the same Fabric (FAB005's set-up models and
    optimizers, FAB007's ``launch()`` before a setup) read inside the site's own function, and
    depend on that function only: typing in one training function of four leaves the verdicts
    of the other three as they were."""
    text = "import torch\nimport lightning as L\n" + "".join(TRAINING.format(i=i) for i in range(4))
    analyzer = Analyzer(Workspace(), ALL_RULES)
    first = analyzer.analysis(text, "/work/train.py")
    per_function = _sites_by_function(first)
    assert set(per_function) == {"train_0", "train_1", "train_2", "train_3"}
    assert per_function["train_2"] >= 6  # FAB001, FAB004/005 (backward), FAB005/007 (setups) …
    before = dict(analyzer.stats)
    edited = text.replace("    for batch in data:\n", "    for batch in data:\n        tick = 1\n", 3).replace(
        "        tick = 1\n", "", 2
    )
    assert edited.count("tick = 1") == 1 and "tick = 1" in edited.split("def train_2")[1].split("def train_3")[0]
    got = analyzer.analysis(edited, "/work/train.py")
    assert analyzer.stats["computed"] - before["computed"] == per_function["train_2"], analyzer.stats
    fresh = Analyzer(Workspace(), ALL_RULES).analysis(edited, "/work/train.py")
    assert _observable(got) == _observable(fresh)


def test_scope_facts_kept_across_versions_follow_the_statement_text():
    """A function's local names are remembered by the text of its module-level statement (a
    keystroke elsewhere does not walk it again): the same text anywhere gives the same names, a
    changed text its own."""
    from fabric_lsp.engine.python.modules import ModuleInfo

    def scopes(text: str) -> dict[str, set[str]]:
        m = ModuleInfo(text)
        return {n.name: m.local_names(n) for n in ast.walk(m.tree) if isinstance(n, ast.FunctionDef)}

    body = "def f(x):\n    y = 1\n\n    def g(q):\n        global G\n        w = q\n        G = w\n    return y\n"
    assert scopes(body) == {"f": {"x", "y", "g"}, "g": {"q", "w"}}
    assert scopes("import os\n\n\n" + body) == {"f": {"x", "y", "g"}, "g": {"q", "w"}}  # moved
    assert scopes(body.replace("y = 1", "z = 1")) == {"f": {"x", "z", "g"}, "g": {"q", "w"}}  # y is only read now
    assert scopes(body.replace("global G", "pass")) == {"f": {"x", "y", "g"}, "g": {"q", "w", "G"}}


def test_a_syntax_error_elsewhere_withholds_fixes_without_recomputing_verdicts():
    """While the file does not parse as it is, findings stay and their fixes are withheld (the
    rewrite could not be checked); the verdicts are those of the clean file, reused across the
    keystrokes that break and mend the file."""
    from fabric_lsp.engine.analyzer import NO_FIX_WHILE_BROKEN

    text = "import torch\nimport lightning as L\n" + "".join(TRAINING.format(i=i) for i in range(3))
    analyzer = Analyzer(Workspace(), [RULES_BY_CODE["FAB001"]])
    (clean, *_) = analyzer.analyze(text, "/work/train.py")
    assert clean.fix is not None
    broken = text.replace("        optimizer.step()\n", "        optimizer.step(\n", 1)  # in train_0
    before = dict(analyzer.stats)
    findings = analyzer.analyze(broken, "/work/train.py")
    assert len(findings) == 3 and all(f.fix is None and f.message.endswith(NO_FIX_WHILE_BROKEN) for f in findings)
    assert analyzer.stats["computed"] - before["computed"] <= 1  # the broken function's own site at most
    mended = analyzer.analyze(text, "/work/train.py")
    assert [f.fix for f in mended] == [
        f.fix for f in Analyzer(Workspace(), [RULES_BY_CODE["FAB001"]]).analyze(text, "/work/train.py")
    ]
    assert all(f.fix is not None for f in mended)


def test_a_replaced_version_is_freed_without_the_cycle_collector():
    """An analysis leaves no reference cycles: the trees of a version the next one replaced are
    freed at once, not by a full collection that pauses a keystroke for tens of milliseconds."""
    import gc

    text = "import torch\nimport lightning as L\n" + "".join(TRAINING.format(i=i) for i in range(3))
    analyzer = Analyzer(Workspace(), ALL_RULES)
    analyzer.analysis(text, "/work/train.py")
    gc.collect()
    gc.disable()
    try:
        for i in range(3):
            analyzer.analysis(text + f"\n# edit {i}\n", "/work/train.py")
        assert gc.collect() == 0
    finally:
        gc.enable()


BACKWARD_IN_A_FUNCTION = """
from lightning.fabric import Fabric


def train(model, optimizer, criterion, x, y):
    fabric = Fabric(precision="bf16-mixed")
    model, optimizer = fabric.setup(model, optimizer)
    loss = criterion(model(x), y)
    loss.backward()
"""


def test_a_verdict_is_not_reused_under_another_lightning_version():
    """The Lightning version is part of what a verdict read: FAB004's check exists since 2.3, so
    a verdict computed under 2.6.6 must not be reused once the analysed version is 2.2."""
    rules = [RULES_BY_CODE["FAB004"]]
    analyzer = Analyzer(Workspace(), rules, lightning_version="2.6.6")
    assert [f.code for f in analyzer.analyze(BACKWARD_IN_A_FUNCTION, "/work/train.py")] == ["FAB004"]
    analyzer.ctx.lightning_version = "2.2"  # what the server did for a file of another version
    got = analyzer.analysis(BACKWARD_IN_A_FUNCTION, "/work/train.py")
    fresh = Analyzer(Workspace(), rules, lightning_version="2.2").analysis(BACKWARD_IN_A_FUNCTION, "/work/train.py")
    assert _observable(got) == _observable(fresh)
    assert got.findings == fresh.findings == []
