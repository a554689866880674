"""One verdict per site: diagnostics and hover read the same verdict, on every site of the corpus."""

from __future__ import annotations

import importlib.util
import json
import textwrap
from pathlib import Path

import pytest
from fabric_lsp.engine import Analyzer, Certainty, Severity
from fabric_lsp.engine.analyzer import HOVER_SECTION_BREAK
from fabric_lsp.engine.explanation import render
from fabric_lsp.engine.findings import Pos, resolve_severity
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import ALL_RULES, RULES_BY_CODE

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
PROJECTS = sorted(p.name for p in CORPUS.iterdir() if (p / "expected.json").exists())

#: what the explanation's headline says for each certainty of the finding at the site
HEADLINE = {Certainty.CERTAIN: "certainly", Certainty.POSSIBLE: "possibly"}


@pytest.mark.parametrize("project", PROJECTS)
def test_hover_and_diagnostic_agree_at_every_site(project):
    root = CORPUS / project
    analyzer = Analyzer(Workspace(root=str(root)), ALL_RULES)
    sites = 0
    for path in sorted(root.rglob("*.py")):
        analysis = analyzer.analysis(path.read_text(), str(path))
        for verdict in analysis.verdicts:
            sites += 1
            assert verdict.explanation is not None
            shown = render(verdict.explanation, str(path))
            for pos in (verdict.span.start, verdict.span.end):
                # several rules may judge one call: hover shows a reporting verdict among them
                covering = [v for v in analysis.verdicts if v.span.start <= pos <= v.span.end]
                if verdict.finding is not None or all(v.finding is None for v in covering):
                    assert analysis.verdict_at(pos) in covering
                # the hover's first section (the Fabric's configurations may follow it)
                first = (analysis.hover(pos) or "").split(HOVER_SECTION_BREAK)[0]
                if len(covering) == 1:
                    assert first == shown, f"{path}:{pos.line + 1}: hover is not the site's verdict"
                else:
                    assert first == render(analysis.verdict_at(pos).explanation, str(path))
                    if any(v.finding is not None for v in covering):
                        assert analysis.verdict_at(pos).finding is not None, (
                            f"{path}:{pos.line + 1}: hover hides a finding"
                        )
            headline = verdict.explanation.headline
            finding = verdict.finding
            if finding is not None and finding.certainty in HEADLINE:
                assert HEADLINE[finding.certainty] in headline, (path, verdict)
            else:
                assert "certainly" not in headline and "possibly" not in headline, (path, verdict)
    expected = json.loads((root / "expected.json").read_text())
    labelled = any(f["code"] == "FAB001" for f in expected.get("findings", []))
    if labelled and not _known_failure(project):  # a project with FAB001 findings has sites
        assert sites


def _known_failure(project: str) -> bool:
    spec = importlib.util.spec_from_file_location("corpus_cases", CORPUS.parent / "test_corpus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return f"{project}:FAB001" in module.KNOWN_FAILURES


def test_guarded_else_branch_hover_is_silent_like_the_diagnostic():
    src = textwrap.dedent(
        """
        from lightning.fabric import Fabric
        from lightning.fabric.strategies import DeepSpeedStrategy
        fabric = Fabric(strategy="deepspeed" if big else "ddp")
        if isinstance(fabric.strategy, DeepSpeedStrategy):
            model, optimizer = fabric.setup(model, optimizer)
        else:
            model = fabric.setup_module(model)
            optimizer = fabric.setup_optimizers(optimizer)
        """
    ).lstrip()
    analysis = Analyzer(Workspace(), [RULES_BY_CODE["FAB001"]]).analysis(src)  # FAB001's guard (no launch: FAB007 too)
    assert analysis.findings == []
    text = analysis.hover(Pos(7, 20))
    assert text is not None
    text = text.split(HOVER_SECTION_BREAK)[0]  # FAB001's section; the Fabric's configurations follow
    assert "DDPStrategy" in text
    assert "DeepSpeed" not in text.split("\n", 1)[1] and "possibly" not in text


def test_unknown_hint_is_a_hint_whatever_the_configuration():
    src = "from lightning.fabric import Fabric\nfabric = Fabric(strategy=args.strategy)\nopt = fabric.setup_optimizers(opt)\n"
    (finding,) = Analyzer(Workspace(), [RULES_BY_CODE["FAB001"]], report_unknown=True).analyze(src)
    assert finding.certainty is Certainty.UNKNOWN and finding.severity is Severity.HINT
    assert (
        resolve_severity(finding.certainty, certain=Severity.WARNING, possible=Severity.ERROR, override=Severity.ERROR)
        is Severity.HINT
    )
    assert resolve_severity(Certainty.POSSIBLE, possible=Severity.INFORMATION) is Severity.INFORMATION
    assert resolve_severity(Certainty.CERTAIN, override=Severity.WARNING) is Severity.WARNING


def test_a_rule_runs_only_where_its_prefilter_matches():
    calls = []

    class Probe(type(ALL_RULES[0])):
        def sites(self, model):
            calls.append(model.path)
            return super().sites(model)

    analyzer = Analyzer(Workspace(), [Probe()])
    analyzer.analysis("import lightning\nfabric.setup_module(model)\n", "a.py")
    analyzer.analysis("fabric.setup_optimizers(opt)\n", "b.py")
    assert calls == ["b.py"]


def test_a_module_jobs_prefilter_is_whether_some_rule_matches(tmp_path):
    # a server's module job (documents.workers.module_job) is made where one of its configuration's
    # rules would run on the text: the analyzer's own prefilter question
    from fabric_lsp.config import Config
    from fabric_lsp.documents.workers import module_job

    config = Config()
    path, root = str(tmp_path / "m.py"), str(tmp_path)
    words = ["", "fabric", "Fabric", ".setup(m)", "setup_optimizers", "global_rank", "Trainer", ".fit(", "ckpt_path"]
    analyzer = Analyzer(Workspace(), config.enabled_rules())
    for a in words:
        for b in words:
            text = f"x = 1\n{a}\ny = {b}\n"
            assert (module_job(path, text, config, root, None) is not None) is bool(analyzer.matching(text)), text
    assert module_job(path, "x = 1\n", config, root, None) is None
    assert module_job(path, "fabric.launch()\n", config, root, None) is not None
