"""The dependency record of an analysis and the graph of documents it feeds."""

from __future__ import annotations

from pathlib import Path

from fabric_lsp.engine.analyzer import Analyzer
from fabric_lsp.engine.workspace.dependencies import Dependencies, DependencyGraph, module_names_of
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import ALL_RULES

TRAIN = """\
from lightning.fabric import Fabric
from {module} import STRATEGY

fabric = Fabric(strategy=STRATEGY)
fabric.launch()
model = fabric.setup_module(model)
optimizer = fabric.setup_optimizers(optimizer)
"""


def test_module_names_of_a_path(tmp_path: Path):
    assert module_names_of(str(tmp_path / "pkg" / "sub" / "mod.py")) >= {"mod", "sub.mod", "pkg.sub.mod"}
    assert "pkg.sub" in module_names_of(str(tmp_path / "pkg" / "sub" / "__init__.py"))
    assert module_names_of(str(tmp_path / "pyproject.toml")) == set()


def test_an_analysis_records_the_modules_it_read_and_the_ones_it_missed(tmp_path: Path):
    (tmp_path / "config.py").write_text('STRATEGY = "deepspeed"\n')
    workspace = Workspace(str(tmp_path))
    analyzer = Analyzer(workspace, ALL_RULES)
    with workspace.recording() as found:
        assert [f.code for f in analyzer.analyze(TRAIN.format(module="config"), str(tmp_path / "train.py"))] == [
            "FAB001"
        ]
    assert str(tmp_path / "config.py") in found.paths
    with workspace.recording() as missing:
        assert analyzer.analyze(TRAIN.format(module="settings"), str(tmp_path / "train.py")) == []
    assert "settings" in missing.missing

    # the file appears: the cached "not found" is dropped and the module resolves
    (tmp_path / "settings.py").write_text('STRATEGY = "deepspeed_stage_2"\n')
    workspace.invalidate(str(tmp_path / "settings.py"), appeared_or_vanished=True)
    assert [f.code for f in analyzer.analyze(TRAIN.format(module="settings"), str(tmp_path / "train.py"))] == ["FAB001"]


def test_unsaved_buffers_win_over_the_disk(tmp_path: Path):
    config = tmp_path / "config.py"
    config.write_text('STRATEGY = "ddp"\n')
    buffers: dict[str, str] = {}
    workspace = Workspace(str(tmp_path), overlay=buffers.get)
    analyzer = Analyzer(workspace, ALL_RULES)
    train = TRAIN.format(module="config")
    assert analyzer.analyze(train, str(tmp_path / "train.py")) == []
    buffers[str(config)] = 'STRATEGY = "deepspeed"\n'
    assert [f.code for f in analyzer.analyze(train, str(tmp_path / "train.py"))] == ["FAB001"]
    del buffers[str(config)]
    assert analyzer.analyze(train, str(tmp_path / "train.py")) == []
    buffers[str(tmp_path / "new.py")] = 'STRATEGY = "deepspeed_stage_2"\n'  # a buffer never saved is a module too
    assert [f.code for f in analyzer.analyze(TRAIN.format(module="new"), str(tmp_path / "train.py"))] == ["FAB001"]


def test_graph_dependents(tmp_path: Path):
    graph = DependencyGraph()
    graph.record("a", Dependencies(paths=frozenset({str(tmp_path / "config.py")})))
    graph.record("b", Dependencies(missing=frozenset({"pkg.settings"})))
    graph.record("c", Dependencies(mentions=frozenset({"train_step"})))
    assert graph.dependents(str(tmp_path / "config.py")) == {"a"}
    settings = str(tmp_path / "pkg" / "settings.py")
    assert graph.dependents(settings) == set()  # changed, not created: a missing name is not affected
    assert graph.dependents(settings, appeared_or_vanished=True) == {"b"}
    texts = {str(tmp_path / "loop.py"): "def train_step(): ...\n", str(tmp_path / "other.py"): "x = 1\n"}
    assert graph.dependents(str(tmp_path / "loop.py"), text=texts.get) == {"c"}
    assert graph.dependents(str(tmp_path / "other.py"), text=texts.get) == set()
    graph.forget("a")
    assert graph.dependents(str(tmp_path / "config.py")) == set()


def test_a_record_that_reused_results_adds_to_the_previous_one(tmp_path: Path):
    graph = DependencyGraph()
    config = str(tmp_path / "config.py")
    graph.record("train", Dependencies(paths=frozenset({config})))
    graph.record("train", Dependencies(), merge=True)  # reused verdicts: no lookups repeated
    assert graph.dependents(config) == {"train"}
    graph.record("train", Dependencies())  # computed afresh: the record is replaced
    assert graph.dependents(config) == set()


def test_set_up_models_reach_a_module_only_through_setup_or_its_importers(tmp_path: Path):
    """Workspace.setups_may_reach: the pre-parse gate of the rules that judge set-up models."""
    step = "def step(model, batch):\n    loss = model(batch).sum()\n    loss.backward()\n"
    (tmp_path / "steps.py").write_text(step)
    (tmp_path / "plain.py").write_text("import torch\n" + step)
    (tmp_path / "train.py").write_text("from steps import step\nmodel = fabric.setup(model)\nstep(model, b)\n")
    workspace = Workspace(str(tmp_path))
    assert not workspace.setups_may_reach(str(tmp_path / "plain.py"), (tmp_path / "plain.py").read_text())
    assert workspace.setups_may_reach(str(tmp_path / "steps.py"), step)  # train.py imports it and sets up
    assert workspace.setups_may_reach(None, "model = fabric.setup_module(model)\n")  # names a setup method
    assert workspace.setups_may_reach(None, "from steps import step\n")  # imports a workspace module
    assert workspace.setups_may_reach(None, "from  . import steps\n")  # a relative import, however spaced
    assert workspace.setups_may_reach(None, "from\t.steps import step\n")
    assert not workspace.setups_may_reach(None, "import torch\nimport os.path\n")  # packages only
    unsaved = "import torch\nfrom steps import step\n"  # an editor buffer that differs from the disk
    assert workspace.setups_may_reach(str(tmp_path / "plain.py"), unsaved)


def test_rule_keywords_never_reject_what_the_prefilter_accepts():
    """A prefilter's ``keywords`` and ``parts`` only speed ``matches()`` up: on every corpus file it
    agrees with the ``pattern``."""
    from fabric_lsp.rules import ALL_RULES

    corpus = Path(__file__).resolve().parents[2] / "corpus"
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(corpus.rglob("*.py"))]
    for rule in ALL_RULES:
        if rule.prefilter.folded:  # looked for in the lower-cased text instead (FAB011)
            continue
        for text in texts:
            assert rule.matches(text) == (rule.prefilter.pattern.search(text) is not None), rule.code


def test_the_prefilters_are_the_rules_own_in_the_registrys_order():
    """``rules.prefilters`` (imported without the rules' checks) lists every rule's prefilter, in
    the order of ``ALL_RULES``: the command line decides with it which files need an analysis."""
    from fabric_lsp.rules import ALL_RULES
    from fabric_lsp.rules.prefilters import PREFILTERS

    assert list(PREFILTERS) == [r.code for r in ALL_RULES]
    assert all(r.prefilter is PREFILTERS[r.code] for r in ALL_RULES)


def test_may_have_findings_is_whether_one_of_the_rules_prefilters_lets_the_text_through():
    """The command line asks the cheap prefilters that let most files through first; the answer is
    still whether some selected rule's prefilter matches."""
    from fabric_lsp.rules import ALL_RULES
    from fabric_lsp.rules.prefilters import _ASKED, may_have_findings

    assert sorted(_ASKED) == sorted(r.code for r in ALL_RULES)  # each asked once, none left out
    words = ["", "Fabric", "fabric.launch()", "fabric.save(p, s)", ".setup(m)", "global_rank", "Trainer(", ".fit("]
    selections = [frozenset(r.code for r in ALL_RULES), frozenset({"FAB001", "PL003"}), frozenset({"FAB010"})]
    for a in words:
        for b in words:
            text = f"x = 1\n{a}\ny = {b}\n"
            for codes in selections:
                expected = any(r.matches(text) for r in ALL_RULES if r.code in codes)
                assert may_have_findings(text, codes) is expected, (text, codes)
