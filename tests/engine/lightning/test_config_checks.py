"""FAB008's engine questions: where a document builds a Fabric (``constructions``), the checks a
strategy makes at launch (``launch_checks``), and which configurations fail on every machine they
can mean (``configuration_problems``) — and the rule on top of them."""

from __future__ import annotations

import ast
import textwrap

import pytest
from fabric_lsp import facts
from fabric_lsp.engine import Analyzer
from fabric_lsp.engine.findings import Certainty, Pos, Severity
from fabric_lsp.engine.fixer import fix_text
from fabric_lsp.engine.lightning.connector import CPU, FabricArgs, Host, Obj, resolve
from fabric_lsp.engine.lightning.launch_checks import launch_error
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.python.values import FabricInst
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import RULES_BY_CODE

CUDA8 = Host(cuda=8)


def model_of(src: str) -> SemanticModel:
    return SemanticModel(ModuleInfo(textwrap.dedent(src), "/tmp/t.py"), Workspace())


def findings(src: str):
    return Analyzer(Workspace(), [RULES_BY_CODE["FAB008"]]).analyze(textwrap.dedent(src))


# -- launch checks ----------------------------------------------------------------------------------
def _launch(host: Host = CUDA8, **kw):
    args = FabricArgs(**kw)
    outcome = resolve(args, host)
    assert outcome.error is None, outcome.error
    return launch_error(args, outcome)


def test_deepspeed_needs_cuda():
    error = _launch(CPU, accelerator="cpu", strategy="deepspeed")
    assert error is not None and error.message == (
        "The DeepSpeed strategy is only supported on CUDA GPUs but `CPUAccelerator` is used."
    )
    assert _launch(accelerator="cuda", strategy="deepspeed") is None


def test_deepspeed_device_indices():
    error = _launch(accelerator="cuda", strategy="deepspeed", devices=[1, 3])
    assert error is not None and "[1, 3]" in error.message and "CUDA_VISIBLE_DEVICES=1,3" in error.message
    assert _launch(accelerator="cuda", strategy="deepspeed", devices=[0, 1]) is None
    assert _launch(accelerator="cuda", strategy="ddp", devices=[1, 3]) is None  # DDP does not check


@pytest.mark.parametrize(
    "sizes, devices, num_nodes, fails",
    [
        ((("data_parallel_size", 2), ("tensor_parallel_size", 2)), 4, 1, False),
        ((("data_parallel_size", 2), ("tensor_parallel_size", 4)), 4, 1, True),
        ((("data_parallel_size", 2),), 4, 1, True),  # tensor "auto" = 4 processes: 2 x 4 != 4
        ((("tensor_parallel_size", 4),), 4, 2, False),  # data "auto" = 2 nodes: 2 x 4 == 8
        ((), 4, 1, False),
    ],
)
def test_model_parallel_sizes(sizes, devices, num_nodes, fails):
    strategy = Obj("ModelParallelStrategy", args=sizes)
    error = _launch(accelerator="cuda", strategy=strategy, devices=devices, num_nodes=num_nodes)
    assert (error is not None) is fails
    if fails:
        assert facts.config_check(error.message).where == "strategies/model_parallel.py:514"


def test_model_parallel_sizes_not_known_are_not_judged():
    strategy = Obj("ModelParallelStrategy", args=(("data_parallel_size", 2),), unknown=("tensor_parallel_size",))
    assert _launch(accelerator="cuda", strategy=strategy, devices=4) is None


def test_every_adapter_error_maps_to_an_argument():
    """Each message the adapter and the launch checks produce has its entry in facts.CONFIG_CHECKS."""
    samples = [
        dict(strategy="ddp_sharded"),
        dict(accelerator="ddp"),
        dict(precision="fp16"),
        dict(devices=0),
        dict(num_nodes=0),
        dict(accelerator="cpu", devices=[0, 1]),
        dict(accelerator="cpu", strategy="fsdp"),
        dict(strategy="deepspeed", precision="64-true"),
        dict(strategy="fsdp", precision="64-true", accelerator="cuda"),
        dict(precision="bf16-true", plugins=Obj("HalfPrecision")),
        dict(accelerator="cuda", devices=[0, 0]),
        dict(plugins=[Obj("HalfPrecision"), Obj("DoublePrecision")]),
        dict(accelerator="cuda"),
        dict(accelerator="gpu"),
    ]
    for kw in samples:
        outcome = resolve(FabricArgs(**kw), CPU if kw.get("accelerator") in (None, "cpu") else CUDA8)
        error = outcome.error or resolve(FabricArgs(**kw), CPU).error
        assert error is not None, kw
        assert facts.config_check(error.message) is not None, error.message


# -- constructions ----------------------------------------------------------------------------------
def test_constructions_any_spelling_subclass_and_partial():
    m = model_of(
        """
        import functools
        import lightning as L
        from lightning.fabric import Fabric as F
        class MyFabric(L.Fabric):
            pass
        class Fabric:  # a look-alike: e = Fabric() below is not Lightning's
            pass
        a = L.Fabric()
        b = F(devices=2)
        c = MyFabric()
        make = functools.partial(L.Fabric, precision="16-mixed")
        d = make(accelerator="cpu")
        e = Fabric()
        """
    )
    lines = [c.lineno for c in m.fabric_constructions()]
    assert lines == [9, 10, 11, 13]  # 1-based; the source starts with a blank line


def test_a_lowercase_callee_is_evaluated_only_where_the_module_makes_a_partial_of_a_fabric(monkeypatch):
    """A partial of something else (an optimizer factory) leaves the module's other calls alone:
    only capitalised callees are evaluated; a partial of a Fabric (or of a project's subclass)
    makes every callee a candidate."""
    other = """
        import functools
        import torch
        from lightning.fabric import Fabric

        make_optimizer = functools.partial(torch.optim.AdamW, lr=1e-3)
        codes = load()
        codes.size(0)
        f = Fabric()
        """
    m = model_of(other)
    evaluated = []
    real = m.inference.evaluate
    monkeypatch.setattr(m.inference, "evaluate", lambda node, *a, **k: evaluated.append(node) or real(node, *a, **k))
    assert [c.lineno for c in m.fabric_constructions()] == [9]
    assert "codes.size" not in [ast.unparse(n) for n in evaluated]
    for maker in ("functools.partial(Fabric)", "functools.partial(MyFabric)", "half"):
        m = model_of(
            f"""
            import functools
            from lightning.fabric import Fabric

            class MyFabric(Fabric): ...
            half = functools.partial(Fabric, precision="16-mixed")
            make = {maker}
            f = make()
            """
        )
        assert 8 in [c.lineno for c in m.fabric_constructions()], maker


def test_project_class_named_fabric_is_not_a_construction():
    m = model_of(
        """
        class Fabric:
            def __init__(self, **kw): ...
        f = Fabric(strategy="nope")
        """
    )
    assert m.fabric_constructions() == []


# -- configuration problems -------------------------------------------------------------------------
def _judgement(src: str):
    m = model_of(src)
    (call,) = m.fabric_constructions()
    fabrics = [v for v in m.values(call) if isinstance(v, FabricInst)]
    return m.configuration_problems(fabrics[0])


@pytest.mark.parametrize(
    "args",
    [
        'strategy="deepspeed"',
        'strategy="fsdp"',
        'strategy="fsdp", devices=2',
        'strategy="xla"',
        'accelerator="cuda", devices=[0, 9]',
    ],
)
def test_errors_of_the_machine_only_are_not_problems(args):
    judgement = _judgement(f"from lightning.fabric import Fabric\nf = Fabric({args})\n")
    assert judgement.failing == 0 and not judgement.problems


def test_explicit_cpu_with_deepspeed_fails_everywhere():
    judgement = _judgement('from lightning.fabric import Fabric\nf = Fabric(accelerator="cpu", strategy="deepspeed")\n')
    assert judgement.failing == judgement.configurations == 1
    assert judgement.problems[0].at_launch


def test_unknown_devices_do_not_hide_an_invalid_name():
    judgement = _judgement(
        "import os\nfrom lightning.fabric import Fabric\n"
        'f = Fabric(strategy="ddp_sharded", devices=int(os.environ["N"]))\n'
    )
    assert judgement.failing == judgement.configurations == 1 and not judgement.unknown


def test_unknown_strategy_is_unknown():
    judgement = _judgement(
        "import sys\nfrom lightning.fabric import Fabric\nf = Fabric(strategy=sys.argv[1], devices=0)\n"
    )
    assert judgement.unknown and judgement.failing == 0


# -- the rule ---------------------------------------------------------------------------------------
def test_branch_with_one_failing_precision_is_a_warning_at_the_literal():
    (f,) = findings(
        "from lightning.fabric import Fabric\n"
        'f = Fabric(precision="64-true" if x else "bf16-mixed", strategy="deepspeed")\n'
    )
    assert f.certainty is Certainty.POSSIBLE and f.severity is Severity.WARNING
    assert (f.span.start.line, f.span.start.col) == (1, 21)
    assert f.fix is None


def test_value_written_elsewhere_is_reported_at_the_keyword_with_related_information():
    (f,) = findings('from lightning.fabric import Fabric\nSTRATEGY = "ddp_shared"\nf = Fabric(strategy=STRATEGY)\n')
    assert f.severity is Severity.ERROR and f.span.start == Pos(2, 20)
    assert [r.span.start.line for r in f.related] == [1]
    assert "Did you mean `strategy='ddp_spawn'`?" in f.message
    assert f.fix is None  # names: a suggestion only


@pytest.mark.parametrize("value", ["8-mixed", "fp8", "8-true"])
def test_a_precision_that_names_8_bits_suggests_transformer_engine(value):
    # difflib's closest spelling of "8-mixed" is "16-mixed": not what an FP8 run asks for
    (f,) = findings(f'from lightning.fabric import Fabric\nf = Fabric(precision="{value}")\n')
    assert f.severity is Severity.ERROR and "Precision '" in f.message
    assert "Did you mean `precision='transformer-engine'` (FP8 through NVIDIA Transformer Engine)?" in f.message
    assert f.fix is None


def test_a_precision_close_to_another_spelling_suggests_it():
    (f,) = findings('from lightning.fabric import Fabric\nf = Fabric(precision="16-mix")\n')
    assert "Did you mean `precision='16-mixed'`?" in f.message


def test_precision_fix_needs_every_configuration_to_agree():
    (f,) = findings(
        'from lightning.fabric import Fabric\nf = Fabric(accelerator="cpu" if x else "cuda", precision=16)\n'
    )
    assert f.severity is Severity.WARNING and f.fix is None and "No automatic fix" in f.message


def test_precision_fix_on_cpu_goes_to_what_lightning_uses():
    src = 'from lightning.fabric import Fabric\nf = Fabric(accelerator="cpu", precision=16)\n'
    analyzer = Analyzer(Workspace(), [RULES_BY_CODE["FAB008"]])
    fixed = fix_text(src, analyzer).text
    assert fixed == 'from lightning.fabric import Fabric\nf = Fabric(accelerator="cpu", precision="bf16-mixed")\n'
    ast.parse(fixed)
    assert analyzer.analyze(fixed) == []


def test_hover_explains_the_check_and_its_place():
    src = 'from lightning.fabric import Fabric\nf = Fabric(accelerator="cuda", devices=[1, 3], strategy="deepspeed")\n'
    analysis = Analyzer(Workspace(), [RULES_BY_CODE["FAB008"]]).analysis(src)
    text = analysis.hover(Pos(1, 6))
    assert text is not None
    assert "strategies/deepspeed.py:881" in text and "devices=[1, 3]" in text


def test_accepted_configuration_has_no_finding_and_no_verdict():
    src = 'from lightning.fabric import Fabric\nf = Fabric(accelerator="cuda", devices=4, strategy="deepspeed")\n'
    analysis = Analyzer(Workspace(), [RULES_BY_CODE["FAB008"]]).analysis(src)
    assert analysis.findings == [] and analysis.verdict_at(Pos(1, 6)) is None
    # hover shows the one configuration only (engine/semantic/describe.py), no verdict of FAB008's
    assert analysis.hover(Pos(1, 6)).startswith("**`Fabric` (this file:2): 1 configuration**")


# -- version awareness ------------------------------------------------------------------------------
@pytest.mark.parametrize("version, expected", [("2.0.9", Severity.ERROR), ("2.1.0", None), ("2.6.6", None)])
def test_deepspeed_true_half_precision_before_2_1(version, expected):
    src = 'from lightning.fabric import Fabric\nf = Fabric(strategy="deepspeed", precision="bf16-true")\n'
    analyzer = Analyzer(Workspace(), [RULES_BY_CODE["FAB008"]], lightning_version=version)
    found = analyzer.analyze(src)
    assert [f.severity for f in found] == ([expected] if expected else [])
    if expected:
        assert (
            "is not supported in DeepSpeed. `precision` must be one of: ('32-true', '16-mixed', 'bf16-mixed')"
            in found[0].message
        )


def test_cli_reads_the_version_setting(tmp_path):
    from fabric_lsp.cli.main import main

    (tmp_path / "pyproject.toml").write_text('[tool.fabric-lsp]\nlightning-version = "2.0.9"\n')
    script = tmp_path / "train.py"
    script.write_text('from lightning.fabric import Fabric\nf = Fabric(strategy="deepspeed", precision="16-true")\n')
    assert main(["check", "--select", "FAB008", str(script)]) != 0
    (tmp_path / "pyproject.toml").write_text('[tool.fabric-lsp]\nlightning-version = "2.6.6"\n')
    assert main(["check", "--select", "FAB008", str(script)]) == 0


# -- DeepSpeed config file --------------------------------------------------------------------------
DS_CONFIG = (
    "from lightning.fabric import Fabric\n"
    "from lightning.fabric.strategies import DeepSpeedStrategy\n"
    'fabric = Fabric(accelerator="cuda", devices=2, strategy=DeepSpeedStrategy(config="{path}"))\n'
)


@pytest.mark.parametrize("where", ["scripts", "."])
def test_deepspeed_config_file_found_from_the_file_or_the_root(tmp_path, where):
    (tmp_path / "scripts").mkdir()
    (tmp_path / where / "ds_config.json").write_text("{}")
    script = tmp_path / "scripts" / "train.py"
    src = DS_CONFIG.format(path="ds_config.json")
    analyzer = Analyzer(Workspace(str(tmp_path)), [RULES_BY_CODE["FAB008"]])
    assert analyzer.analyze(src, str(script)) == []


def test_deepspeed_config_file_missing_is_a_warning_at_the_strategy(tmp_path):
    (tmp_path / "scripts").mkdir()
    script = tmp_path / "scripts" / "train.py"
    src = DS_CONFIG.format(path="configs/ds_zero3.json")
    (f,) = Analyzer(Workspace(str(tmp_path)), [RULES_BY_CODE["FAB008"]]).analyze(src, str(script))
    assert f.severity is Severity.WARNING and f.certainty is Certainty.POSSIBLE
    assert "the path does not exist: configs/ds_zero3.json" in f.message
    assert f.span.start == Pos(2, 56)  # the DeepSpeedStrategy(...) value


def test_deepspeed_config_absolute_or_unsaved_is_not_judged(tmp_path):
    analyzer = Analyzer(Workspace(str(tmp_path)), [RULES_BY_CODE["FAB008"]])
    assert analyzer.analyze(DS_CONFIG.format(path="/cluster/ds.json"), str(tmp_path / "t.py")) == []
    assert analyzer.analyze(DS_CONFIG.format(path="ds.json")) == []  # an unsaved buffer has no folder


MODEL_PARALLEL = """
import lightning as L
from lightning.fabric.strategies import ModelParallelStrategy

strategy = ModelParallelStrategy(data_parallel_size=4, tensor_parallel_size=1)
fabric = L.Fabric(strategy=strategy{devices})
"""


def test_model_parallel_sizes_against_every_device_of_the_machine_are_not_judged():
    """``devices="auto"`` (the default) counts the machine's devices: 4 x 1 is right on a 4-GPU node
    (Lightning's own fp8 example), so no configuration check that reads the count is an error."""
    assert findings(MODEL_PARALLEL.format(devices="")) == []
    assert findings(MODEL_PARALLEL.format(devices=', devices="auto"')) == []
    [finding] = findings(MODEL_PARALLEL.format(devices=", devices=8"))
    assert finding.severity is Severity.ERROR and "world size (8)" in finding.message
