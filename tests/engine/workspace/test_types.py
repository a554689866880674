"""A Fabric known by its type only: annotations the evaluator reads, and jedi as the fallback for
what it cannot follow. The configuration is unknown, so FAB001 says so only as a hint."""

from __future__ import annotations

import ast
import textwrap

from fabric_lsp.engine import Analyzer, Certainty
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import ALL_RULES


def _findings(tmp_path, files: dict[str, str], main: str, env=None):
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip())
    analyzer = Analyzer(Workspace(str(tmp_path), env), ALL_RULES, report_unknown=True)
    path = tmp_path / main
    return analyzer.analyze(path.read_text(), str(path))


def test_a_function_annotated_to_return_a_fabric(tmp_path):
    files = {
        "factory.py": "import lightning as L\n\ndef make(cfg) -> L.Fabric:\n    return build(cfg)\n",
        "train.py": "from factory import make\nfabric = make(cfg)\nopt = fabric.setup_optimizers(opt)\n",
    }
    (hint,) = _findings(tmp_path, files, "train.py")
    assert hint.certainty is Certainty.UNKNOWN and "annotated `Fabric`" in hint.message


def test_a_class_field_annotated_as_fabric(tmp_path):
    files = {
        "train.py": """
            from dataclasses import dataclass
            from lightning.fabric import Fabric

            @dataclass
            class Trainer:
                fabric: Fabric

                def fit(self, opt):
                    return self.fabric.setup_optimizers(opt)
        """,
    }
    (hint,) = _findings(tmp_path, files, "train.py")
    assert hint.certainty is Certainty.UNKNOWN


def test_jedi_knows_a_type_the_evaluator_cannot_follow(tmp_path, lightning_env):
    # a string annotation: the evaluator does not read it, jedi does
    files = {
        "holder.py": "import lightning as L\n\nclass Holder:\n    fabric: 'L.Fabric'\n",
        "train.py": "from holder import Holder\n\ndef fit(h: Holder, opt):\n    return h.fabric.setup_optimizers(opt)\n",
    }
    (hint,) = _findings(tmp_path, files, "train.py", str(lightning_env))
    assert "jedi" in hint.message


def test_no_fabric_where_jedi_knows_nothing(tmp_path, lightning_env):
    files = {"train.py": "from somewhere import get\nthing = get()\nthing.setup_optimizers(opt)\n"}
    assert _findings(tmp_path, files, "train.py", str(lightning_env)) == []


def test_jedi_is_not_asked_where_it_can_know_no_fabric(tmp_path):
    # no Lightning in the analysed environment, and no Fabric source in the workspace
    env = tmp_path / "env"
    (env / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    (tmp_path / "train.py").write_text("x = 1\n")
    assert not Workspace(str(tmp_path), str(env)).may_infer_fabric_types()


def test_jedi_is_asked_where_the_workspace_holds_fabric_s_source(tmp_path):
    env = tmp_path / "env"
    (env / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    source = tmp_path / "src" / "lightning" / "fabric"
    source.mkdir(parents=True)
    (source / "fabric.py").write_text("class Fabric: ...\n")
    assert Workspace(str(tmp_path), str(env)).may_infer_fabric_types()


def test_jedi_is_asked_where_lightning_is_installed(tmp_path, lightning_env):
    assert Workspace(str(tmp_path), str(lightning_env)).may_infer_fabric_types()


def test_a_script_of_a_module_as_on_disk_keeps_the_tree_jedi_caches(tmp_path, monkeypatch, lightning_env):
    # jedi's Script parses its text afresh; a module as on disk is read through parso's cache
    # first (as jedi reads the modules it imports), and the Script keeps that tree
    import jedi.settings
    import parso.cache
    from fabric_lsp.engine.python.modules import ModuleInfo
    from fabric_lsp.engine.workspace.jedi_types import script_for

    cache_dir = tmp_path / "jedi-cache"
    monkeypatch.setattr(jedi.settings, "cache_directory", str(cache_dir))
    path = tmp_path / "train.py"
    path.write_text("import lightning as L\n\nfabric = L.Fabric()\n")
    workspace = Workspace(str(tmp_path), str(lightning_env))
    module = ModuleInfo(path.read_text(), str(path))
    script = script_for(workspace, module)
    grammar = workspace.jedi_environment.get_grammar()
    cached = parso.cache.parser_cache[grammar._hashed][path]
    assert script._module_node is cached.node
    assert any(cache_dir.rglob("*.pkl"))  # kept on disk too, as jedi keeps an imported module
    assert [n.full_name for n in script.infer(3, 1)] == ["lightning.fabric.fabric.Fabric"]


def test_an_unsaved_buffer_is_parsed_as_it_is(tmp_path, monkeypatch, lightning_env):
    import jedi.settings
    from fabric_lsp.engine.python.modules import ModuleInfo
    from fabric_lsp.engine.workspace.jedi_types import script_for

    cache_dir = tmp_path / "jedi-cache"
    monkeypatch.setattr(jedi.settings, "cache_directory", str(cache_dir))
    path = tmp_path / "train.py"
    path.write_text("fabric = None\n")
    buffer = "import lightning as L\n\nfabric = L.Fabric()\n"
    workspace = Workspace(str(tmp_path), str(lightning_env), overlay=lambda p: buffer if p == str(path) else None)
    script = script_for(workspace, ModuleInfo(buffer, str(path)))
    assert script._code == buffer and not any(cache_dir.rglob("*.pkl"))
    assert [n.full_name for n in script.infer(3, 1)] == ["lightning.fabric.fabric.Fabric"]


# -- jedi is asked only where its answer can be reported --------------------------------------
HOLDER = "import lightning as L\n\nclass Holder:\n    fabric: 'L.Fabric'\n"


def _asked(tmp_path, monkeypatch, env, train: str, report_unknown: bool) -> tuple[list, list[str]]:
    """The findings on ``train`` (beside :data:`HOLDER`) and the expressions jedi was asked about."""
    from fabric_lsp.engine.semantic import model

    asked: list[str] = []
    real = model.infers_fabric

    def counting(workspace, module, node, script=None):
        asked.append(ast.unparse(node))
        return real(workspace, module, node, script)

    monkeypatch.setattr(model, "infers_fabric", counting)
    (tmp_path / "holder.py").write_text(HOLDER)
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(train).lstrip())
    analyzer = Analyzer(Workspace(str(tmp_path), str(env)), ALL_RULES, report_unknown=report_unknown)
    return analyzer.analyze(path.read_text(), str(path)), asked


#: calls on a Fabric known only by its type whose checks depend on its configuration: a hint each
#: (FAB001, FAB005, FAB009, FAB002, FAB006's configuration checks, FAB007's `launch()`)
CONFIGURATION_CHECKS = """
from holder import Holder

def fit(h: Holder, model, opt):
    model = h.fabric.setup_module(model)
    opt = h.fabric.setup_optimizers(opt)
    model, opt = h.fabric.setup(model, opt)
    h.fabric.clip_gradients(model, opt, max_norm=1.0)
    if h.fabric.global_rank == 0:
        h.fabric.barrier()
    h.fabric.save("last.ckpt", {"model": model})
    h.fabric.launch()
"""


def test_jedi_is_not_asked_where_only_a_hidden_hint_could_come_of_it(tmp_path, monkeypatch, lightning_env):
    findings, asked = _asked(tmp_path, monkeypatch, lightning_env, CONFIGURATION_CHECKS, report_unknown=False)
    assert findings == [] and asked == []


def test_with_report_unknown_jedi_gives_the_hints(tmp_path, monkeypatch, lightning_env):
    findings, asked = _asked(tmp_path, monkeypatch, lightning_env, CONFIGURATION_CHECKS, report_unknown=True)
    assert asked and findings and all(f.certainty is Certainty.UNKNOWN for f in findings)
    assert {"FAB001", "FAB005"} <= {f.code for f in findings}


def test_a_launch_of_a_call_fails_on_a_fabric_known_only_by_its_type(tmp_path, monkeypatch, lightning_env):
    # `launch(main())` fails on every configuration: jedi is asked, once the check fails
    train = """
        from holder import Holder

        def main(fabric):
            pass

        def run(h: Holder):
            h.fabric.launch(main())
            h.fabric.launch(main)
    """
    findings, asked = _asked(tmp_path, monkeypatch, lightning_env, train, report_unknown=False)
    assert [(f.code, f.certainty, f.span.start.line) for f in findings] == [("FAB007", Certainty.CERTAIN, 6)]
    assert len(asked) == 1


def test_a_swapped_save_fails_on_a_fabric_known_only_by_its_type(tmp_path, monkeypatch, lightning_env):
    train = """
        from holder import Holder

        def save(h: Holder, model):
            h.fabric.save({"model": model}, "last.ckpt")
    """
    findings, asked = _asked(tmp_path, monkeypatch, lightning_env, train, report_unknown=False)
    assert [(f.code, f.certainty) for f in findings] == [("FAB006", Certainty.CERTAIN)]
    assert asked
