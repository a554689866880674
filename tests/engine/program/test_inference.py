"""Engine tests: which code gets FAB001, with which severity — and which stays silent.

Every source is checked in two analysed environments: without `lightning` (import-based
qualified names) and with `lightning` installed (jedi sees its source).
"""

from __future__ import annotations

import ast
import os
import textwrap

import pytest
from fabric_lsp import facts
from fabric_lsp.engine import Analyzer, Severity
from fabric_lsp.engine.program.infer import Inference
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.python.values import Ctx, Unknown
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import RULES_BY_CODE

#: FAB001's inference tests (other rules, e.g. FAB007's missing launch, also apply to these snippets)
FAB001_ONLY = [RULES_BY_CODE["FAB001"]]

SEPARATED = """
model = fabric.setup_module(model)
optimizer = fabric.setup_optimizers(optimizer)
"""


def run(source: str, env=None, root=None, path=None):
    analyzer = Analyzer(Workspace(root, env), FAB001_ONLY)
    return analyzer.analyze(textwrap.dedent(source).lstrip("\n"), path)


def severities(source: str, env=None, **kw) -> list[tuple[int, str]]:
    return [(f.span.start.line + 1, f.severity.value) for f in run(source, env, **kw)]


def program(header: str, setup: str = SEPARATED, imports: str = "from lightning.fabric import Fabric") -> str:
    return f"{imports}\n{textwrap.dedent(header).strip()}\n{textwrap.dedent(setup).strip()}\n"


RAISING_STRINGS = [s for s, k in facts.STRATEGY_STRINGS.items() if k.raises_on_separated_setup]
SILENT_STRINGS = [s for s, k in facts.STRATEGY_STRINGS.items() if not k.raises_on_separated_setup] + ["auto"]


@pytest.mark.parametrize("name", RAISING_STRINGS + ["DeepSpeed_Stage_3", "XLA"])
def test_every_raising_strategy_string_is_an_error(name, analysed_env):
    src = program(f'fabric = Fabric(strategy="{name}")')
    assert severities(src, analysed_env) == [(4, "error")]


@pytest.mark.parametrize("name", [*SILENT_STRINGS, " deepspeed ", "tpu_spawn", "ddp_find_unused_parameters_false"])
def test_non_raising_strategy_strings_are_silent(name, analysed_env):
    """Names Lightning 2.6.6 rejects in ``Fabric(...)`` itself (the connector lower-cases but does
    not strip; ``tpu_spawn`` is 1.x) never reach ``setup_optimizers``."""
    assert severities(program(f'fabric = Fabric(strategy="{name}")'), analysed_env) == []


STRATEGY_IMPORTS = [
    ("from lightning.fabric.strategies import DeepSpeedStrategy as S", "S()"),
    ("from lightning.fabric.strategies.deepspeed import DeepSpeedStrategy", "DeepSpeedStrategy(stage=3)"),
    ("from lightning_fabric.strategies import DeepSpeedStrategy", "DeepSpeedStrategy()"),
    ("from lightning_fabric.strategies.xla import XLAStrategy", "XLAStrategy()"),
    ("import lightning.fabric.strategies as strategies", "strategies.XLAStrategy()"),
    ("import lightning as L", "L.fabric.strategies.DeepSpeedStrategy()"),
    ("from lightning.fabric import strategies", "strategies.deepspeed.DeepSpeedStrategy()"),
]


@pytest.mark.parametrize("imp, expr", STRATEGY_IMPORTS)
def test_strategy_instances_through_documented_paths(imp, expr, analysed_env):
    src = program(f"fabric = Fabric(strategy={expr})", imports=f"from lightning.fabric import Fabric\n{imp}")
    assert severities(src, analysed_env) == [(5, "error")]


@pytest.mark.parametrize(
    "imp, expr",
    [
        ("from lightning.fabric.strategies import XLAFSDPStrategy", "XLAFSDPStrategy()"),
        ("from lightning.fabric.strategies import FSDPStrategy", "FSDPStrategy()"),
        ("from lightning.fabric.strategies import SingleDeviceXLAStrategy", "SingleDeviceXLAStrategy(device=0)"),
        ("from lightning.fabric.strategies import ModelParallelStrategy", "ModelParallelStrategy()"),
        ("from lightning.pytorch.strategies import DeepSpeedStrategy", "DeepSpeedStrategy()"),
        ("from pytorch_lightning.strategies import DeepSpeedStrategy", "DeepSpeedStrategy()"),
    ],
)
def test_non_raising_or_foreign_strategy_instances_are_silent(imp, expr, analysed_env):
    src = program(f"fabric = Fabric(strategy={expr})", imports=f"from lightning.fabric import Fabric\n{imp}")
    assert severities(src, analysed_env) == []


@pytest.mark.parametrize(
    "imports, ctor",
    [
        ("import lightning as L", "L.Fabric"),
        ("import lightning", "lightning.Fabric"),
        ("import lightning.fabric", "lightning.fabric.Fabric"),
        ("from lightning import Fabric as F", "F"),
        ("from lightning.fabric.fabric import Fabric", "Fabric"),
        ("import lightning_fabric as lf", "lf.Fabric"),
        ("from lightning_fabric import Fabric", "Fabric"),
    ],
)
def test_fabric_through_every_import_form(imports, ctor, analysed_env):
    src = program(f'fabric = {ctor}(strategy="deepspeed")', imports=imports)
    assert severities(src, analysed_env) == [(4, "error")]


def test_subclass_of_strategy_in_same_file_is_an_error(analysed_env):
    src = """
    from lightning.fabric import Fabric
    from lightning.fabric.strategies import DeepSpeedStrategy

    class Base(DeepSpeedStrategy):
        pass

    class MyStrategy(Base):
        def setup_environment(self):
            pass

    fabric = Fabric(strategy=MyStrategy(stage=3))
    model = fabric.setup_module(model)
    opt = fabric.setup_optimizers(opt)
    """
    findings = run(src, analysed_env)
    assert [(f.span.start.line + 1, f.severity) for f in findings] == [(13, Severity.ERROR)]
    assert "`MyStrategy`" in findings[0].message


def test_project_class_named_fabric_is_not_lightning():
    src = """
    class Fabric:
        def __init__(self, strategy):
            self.strategy = strategy
        def setup_optimizers(self, opt):
            return opt

    fabric = Fabric(strategy="deepspeed")
    opt = fabric.setup_optimizers(opt)
    """
    assert severities(src) == []


def test_a_recursive_helper_is_not_unrolled():
    """A function that calls itself with other arguments at each level (a vendored hydra
    ``instantiate_node``) is not followed into itself: the recursive call is not known, so
    nothing is claimed about what it returns — and the evaluation stops at once instead of
    unrolling until its budget runs out."""
    src = """
    from lightning.fabric import Fabric
    def pick(n, name):
        if n == 0:
            return name
        return pick(n - 1, name)
    fabric = Fabric(strategy=pick(3, "auto"))
    model = fabric.setup_module(model)
    opt = fabric.setup_optimizers(opt)
    """
    assert severities(src) == []
    module = ModuleInfo(textwrap.dedent(src).lstrip("\n"), None)
    call = next(n for n in ast.walk(module.tree) if isinstance(n, ast.Call) and ast.unparse(n) == "pick(3, 'auto')")
    inference = Inference()
    assert inference.evaluate(call, module) == [Unknown("recursive call of `pick`")]
    assert inference.budget.steps < 50


def test_ssh_fabric_package_is_unrelated():
    src = """
    from fabric import Connection
    fabric = Connection("host", connect_kwargs={"strategy": "deepspeed"})
    opt = fabric.setup_optimizers(opt)
    """
    assert severities(src) == []


def test_fabric_in_function_scope_and_module_constant(analysed_env):
    src = """
    from lightning.fabric import Fabric
    STRATEGY = "deepspeed_stage_2"

    def main():
        fabric = Fabric(strategy=STRATEGY, devices=4)
        fabric.launch()
        model = fabric.setup_module(build())
        optimizer = fabric.setup_optimizers(make_opt(model))
    """
    assert severities(src, analysed_env) == [(8, "error")]


def test_self_fabric_set_in_init_used_in_other_method(analysed_env):
    src = """
    import lightning as L

    class Trainer:
        def __init__(self, model):
            self.fabric = L.Fabric(strategy="xla", devices=8)
            self.model = model

        def fit(self, optimizer):
            self.model = self.fabric.setup(self.model)
            self.optimizer = self.fabric.setup_optimizers(optimizer)
    """
    assert severities(src, analysed_env) == [(10, "error")]


@pytest.mark.parametrize(
    "kwargs, expected",
    [
        ('accelerator="tpu"', "error"),
        ('accelerator="tpu", devices="auto"', "error"),
        ('accelerator="tpu", devices=[0, 1]', None),  # ValueError in Fabric() (2.6.6 source)
        ('accelerator="TPU", devices=8', None),  # accelerator names are case-sensitive
        ('accelerator="tpu", devices=1', None),
        ('accelerator="tpu", devices=[3]', None),
        ('accelerator="tpu", devices=8, strategy="fsdp"', None),
        ('accelerator="tpu", devices=8, strategy="auto"', "error"),
        ('accelerator="cuda", devices=8', None),
        ("accelerator=XLAAccelerator(), devices=4", "error"),
        ("", None),
    ],
)
def test_tpu_rules(kwargs, expected, analysed_env):
    src = program(
        f"fabric = Fabric({kwargs})",
        imports="from lightning.fabric import Fabric\nfrom lightning.fabric.accelerators import XLAAccelerator",
    )
    assert severities(src, analysed_env) == ([(5, expected)] if expected else [])


def test_conditional_expression_is_a_warning(analysed_env):
    src = program('fabric = Fabric(strategy="deepspeed" if args.ds else "ddp")')
    assert severities(src, analysed_env) == [(4, "warning")]


def test_if_else_branch_is_a_warning_and_names_the_origin(analysed_env):
    src = """
    import lightning as L
    from lightning.fabric.strategies import XLAStrategy, FSDPStrategy

    if args.tpu:
        strategy = XLAStrategy()
    else:
        strategy = FSDPStrategy()
    fabric = L.Fabric(strategy=strategy)
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(optimizer)
    """
    findings = run(src, analysed_env)
    assert [(f.span.start.line + 1, f.severity) for f in findings] == [(10, Severity.WARNING)]
    assert any(r.span.start.line == 4 for r in findings[0].related)
    assert "XLAStrategy" in findings[0].message


def test_both_branches_raising_is_certain(analysed_env):
    src = """
    from lightning.fabric import Fabric
    strategy = "deepspeed_stage_3" if big else "deepspeed"
    fabric = Fabric(strategy=strategy)
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(optimizer)
    """
    assert severities(src, analysed_env) == [(5, "error")]


def test_last_assignment_wins(analysed_env):
    src = """
    from lightning.fabric import Fabric
    strategy = "deepspeed"
    strategy = "ddp"
    fabric = Fabric(strategy=strategy)
    opt = fabric.setup_optimizers(opt)
    """
    assert severities(src, analysed_env) == []
    src2 = src.replace('strategy = "ddp"', 'if flag:\n        strategy = "ddp"')
    assert severities(src2, analysed_env) == [(6, "warning")]


def test_unknown_strategy_is_silent():
    src = program("fabric = Fabric(strategy=args.strategy)")
    assert severities(src) == []
    assert severities(program("fabric = Fabric(**cfg)")) == []


@pytest.mark.parametrize(
    "setup",
    [
        "model, optimizer = fabric.setup(model, optimizer)",
        "model = fabric.setup_module(model)",
        "model = fabric.setup(model)",
        "# optimizer = fabric.setup_optimizers(optimizer)",
        "strategy.setup_module(model)\nstrategy.setup_optimizer(optimizer)",
        "setup_module(fabric, model)",
    ],
)
def test_legal_or_lookalike_setups_are_silent(setup, analysed_env):
    assert severities(program('fabric = Fabric(strategy="deepspeed")', setup=setup), analysed_env) == []


def test_setup_optimizers_without_module_setup_is_still_an_error():
    findings = run(program('fabric = Fabric(strategy="xla")', setup="optimizer = fabric.setup_optimizers(optimizer)"))
    assert [f.severity for f in findings] == [Severity.ERROR]
    assert findings[0].fix is None
    assert "No automatic fix" in findings[0].message


def test_launch_hands_the_fabric_to_the_function(analysed_env):
    src = """
    import lightning as L

    def main(fabric, cfg):
        model = fabric.setup_module(build(cfg))
        opt = fabric.setup_optimizers(make(model))

    if __name__ == "__main__":
        fabric = L.Fabric(strategy="deepspeed_stage_3", devices=2)
        fabric.launch(main, cfg)
    """
    assert severities(src, analysed_env) == [(5, "error")]


def test_parameter_from_call_sites(analysed_env):
    src = """
    from lightning.fabric import Fabric

    def fit(fabric, model, opt):
        model = fabric.setup(model)
        opt = fabric.setup_optimizers(opt)

    fit(Fabric(strategy="deepspeed"), model, opt)
    fit(Fabric(strategy="ddp"), model, opt)
    """
    assert severities(src, analysed_env) == [(5, "warning")]


def test_factory_function_returning_fabric(analysed_env):
    src = """
    from lightning.fabric import Fabric

    def build_fabric(strategy="deepspeed"):
        return Fabric(strategy=strategy, devices=4)

    fabric = build_fabric()
    model = fabric.setup_module(model)
    opt = fabric.setup_optimizers(opt)
    other = build_fabric("ddp")
    opt = other.setup_optimizers(opt)
    """
    assert severities(src, analysed_env) == [(8, "error")]


def test_isinstance_guard_silences(analysed_env):
    src = """
    from lightning.fabric import Fabric
    from lightning.fabric.strategies import DeepSpeedStrategy, XLAStrategy

    fabric = Fabric(strategy="deepspeed" if ds else "fsdp")
    if isinstance(fabric.strategy, (DeepSpeedStrategy, XLAStrategy)):
        model, opt = fabric.setup(model, opt)
    else:
        model = fabric.setup_module(model)
        opt = fabric.setup_optimizers(opt)
    if not isinstance(fabric.strategy, DeepSpeedStrategy):
        opt = fabric.setup_optimizers(opt)
    """
    assert severities(src, analysed_env) == []


def test_syntax_error_in_one_function_does_not_hide_another():
    src = """
    from lightning.fabric import Fabric

    def broken():
        x = foo(
        y = [1, 2

    def train():
        fabric = Fabric(strategy="deepspeed")
        model = fabric.setup_module(model)
        opt = fabric.setup_optimizers(opt)

    def also_broken(:
        pass
    """
    findings = run(src)
    assert [(f.span.start.line + 1, f.severity) for f in findings] == [(10, Severity.ERROR)]
    assert findings[0].fix is None  # never offer an edit on a file that does not parse


@pytest.mark.parametrize(
    "source",
    [
        "",
        "fabric.setup_optimizers(",
        "from lightning.fabric import Fabric\nfabric = Fabric(strategy=\nfabric.setup_optimizers(opt",
        "def f(:\n  fabric.setup_optimizers(x)\n",
        "x = (" * 300 + "fabric.setup_optimizers()",
        "\x00setup_optimizers",
        "class A:\n    def f(self):\n        self.fabric.setup_optimizers(self.opt)\n",
        "a = a\nfabric = fabric\nfabric.setup_optimizers(o)\n",
        "def f(fabric):\n    return f(fabric)\nf(1).setup_optimizers(o)\n",
    ],
)
def test_bad_input_never_raises(source):
    run(source)


def test_recursive_definitions_terminate():
    src = """
    from lightning.fabric import Fabric
    def a(): return b()
    def b(): return a()
    fabric = a()
    x = fabric
    fabric = x
    opt = fabric.setup_optimizers(opt)
    """
    assert severities(src) == []


def test_noqa_suppresses():
    base = program('fabric = Fabric(strategy="deepspeed")')
    assert severities(base.replace("(optimizer)\n", "(optimizer)  # noqa: FAB001\n")) == []
    assert severities(base.replace("(optimizer)\n", "(optimizer)  # noqa\n")) == []
    assert severities(base.replace("(optimizer)\n", "(optimizer)  # noqa: E501\n")) == [(4, "error")]


def test_cross_module_factory_and_constant(tmp_path, analysed_env):
    pkg = tmp_path / "proj"
    (pkg / "utils").mkdir(parents=True)
    (pkg / "utils" / "__init__.py").write_text("")
    (pkg / "utils" / "setup.py").write_text(
        "import lightning as L\nfrom proj_config import STRATEGY\n\n"
        "def build_fabric(devices=8):\n    return L.Fabric(strategy=STRATEGY, devices=devices)\n"
    )
    (pkg / "proj_config.py").write_text('STRATEGY = "deepspeed_stage_3"\n')
    train = pkg / "train.py"
    train.write_text(
        "from utils.setup import build_fabric\n\nfabric = build_fabric()\n"
        "model = fabric.setup_module(model)\nopt = fabric.setup_optimizers(opt)\n"
    )
    findings = run(train.read_text(), analysed_env, root=str(pkg), path=str(train))
    assert [(f.span.start.line + 1, f.severity) for f in findings] == [(5, Severity.ERROR)]
    assert any(r.path and r.path.endswith("proj_config.py") for r in findings[0].related)


def test_relative_import_of_strategy_subclass(tmp_path, analysed_env):
    pkg = tmp_path / "app"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "strategies.py").write_text(
        "from lightning.fabric.strategies import DeepSpeedStrategy\n\nclass Tuned(DeepSpeedStrategy):\n    pass\n"
    )
    (pkg / "train.py").write_text(
        "from lightning.fabric import Fabric\nfrom .strategies import Tuned\n\n"
        "fabric = Fabric(strategy=Tuned())\nmodel = fabric.setup(model)\nopt = fabric.setup_optimizers(opt)\n"
    )
    path = pkg / "train.py"
    assert severities(path.read_text(), analysed_env, root=str(tmp_path), path=str(path)) == [(6, "error")]


def test_argparse_choices_literal_click_and_tables(analysed_env):
    src = """
    import argparse
    from typing import Literal
    import click
    from lightning.fabric import Fabric
    from lightning.fabric.strategies import DeepSpeedStrategy, DDPStrategy

    parser = argparse.ArgumentParser()
    parser.add_argument("--strategy", default="ddp", choices=["ddp", "deepspeed", "fsdp"])
    parser.add_argument("--free", default="deepspeed")
    args = parser.parse_args()
    fabric = Fabric(strategy=args.strategy)
    opt = fabric.setup_optimizers(opt)
    free = Fabric(strategy=args.free)
    opt = free.setup_optimizers(opt)

    def main(strategy: Literal["ddp", "deepspeed_stage_3"] = "ddp"):
        fabric = Fabric(strategy=strategy)
        opt = fabric.setup_optimizers(opt)

    @click.command()
    @click.option("--strategy", type=click.Choice(["xla", "ddp"]))
    def cli(strategy):
        fabric = Fabric(strategy=strategy)
        opt = fabric.setup_optimizers(opt)

    STRATS = {"ds": DeepSpeedStrategy, "ddp": DDPStrategy}
    def table(cfg):
        fabric = Fabric(strategy=STRATS[cfg.name]())
        opt = fabric.setup_optimizers(opt)
        fabric = Fabric(strategy=STRATS["ds"](stage=3))
        opt = fabric.setup_optimizers(opt)
    """
    findings = run(src, analysed_env)
    got = [(f.span.start.line + 1, f.severity.value) for f in findings]
    # `--free` has no choices, but its default is what the script does when run as shipped
    assert got == [(12, "warning"), (14, "warning"), (18, "warning"), (24, "warning"), (29, "warning"), (31, "error")]
    assert '"deepspeed" from the choices of `--strategy`' in findings[0].message
    assert "the default of `--free`" in findings[1].message
    assert "Literal" in findings[2].message and "click" in findings[3].message


def test_overridden_method_in_subclass_and_equality_guards(analysed_env):
    src = """
    import sys
    from lightning.fabric import Fabric

    class Base:
        def make_strategy(self):
            return "ddp"
        def run(self):
            fabric = Fabric(strategy=self.make_strategy())
            opt = fabric.setup_optimizers(opt)

    class Big(Base):
        def make_strategy(self):
            return "deepspeed"

    strategy = "deepspeed" if sys.argv[1] == "ds" else "ddp"
    fabric = Fabric(strategy=strategy)
    if strategy == "ddp":
        opt = fabric.setup_optimizers(opt)
    if strategy not in ("ddp", "fsdp"):
        opt = fabric.setup_optimizers(opt)
    """
    assert severities(src, analysed_env) == [(9, "warning"), (20, "error")]


def test_unknown_strategy_hint_when_asked():
    src = program("fabric = Fabric(strategy=sys.argv[1])")
    assert run(src) == []
    findings = Analyzer(Workspace(), FAB001_ONLY, report_unknown=True).analyze(src)
    assert [f.severity for f in findings] == [Severity.HINT]
    assert "`sys.argv[1]`" in findings[0].message


def test_hover_explains_strategy_and_chain():
    from fabric_lsp.engine.findings import Pos

    src = textwrap.dedent(
        """
        import lightning as L

        def train(fabric):
            opt = fabric.setup_optimizers(opt)

        if __name__ == "__main__":
            fabric = L.Fabric(strategy="deepspeed_stage_3")
            fabric.launch(train)
        """
    ).lstrip()
    analyzer = Analyzer(Workspace(), FAB001_ONLY)
    text = analyzer.analysis(src, None).hover(Pos(3, 11))
    assert text is not None
    assert "certainly DeepSpeed/XLA" in text and "DeepSpeedStrategy" in text
    assert "fabric.launch(train)" in text and ":7" in text
    assert analyzer.analysis(src, None).hover(Pos(0, 1)) is None


def test_call_sites_in_other_modules(tmp_path, analysed_env):
    (tmp_path / "utils.py").write_text(
        "def fit(fabric, model, opt):\n    model = fabric.setup(model)\n    opt = fabric.setup_optimizers(opt)\n\n"
        "class Loop:\n    def run(self, fabric, n):\n        m = fabric.setup_module(n)\n        o = fabric.setup_optimizers(n)\n"
    )
    (tmp_path / "main.py").write_text(
        "from lightning.fabric import Fabric\nfrom utils import fit, Loop\n\n"
        "fabric = Fabric(strategy='deepspeed')\nfit(fabric, 1, 2)\nfabric.launch(Loop().run, 3)\n"
    )
    path = tmp_path / "utils.py"
    assert severities(path.read_text(), analysed_env, root=str(tmp_path), path=str(path)) == [
        (3, "error"),
        (8, "error"),
    ]


@pytest.mark.parametrize("callers", [3, 25])
def test_a_function_called_from_more_modules_than_are_followed_is_an_api(tmp_path, callers, monkeypatch):
    """A helper called from a few modules takes its parameters' values from their calls; one that
    more than ``MAX_CALLER_MODULES`` modules may call (thunder's ``jit``: 77) is an API whose
    callers are not parsed: its parameters are filled by callers not in view (silent here)."""
    from fabric_lsp.engine.python import calls

    assert calls.MAX_CALLER_MODULES < 25
    (tmp_path / "utils.py").write_text(
        "def fit(fabric, model, opt):\n    model = fabric.setup_module(model)\n    opt = fabric.setup_optimizers(opt)\n"
    )
    for i in range(callers):
        (tmp_path / f"main_{i}.py").write_text(
            "from lightning.fabric import Fabric\nfrom utils import fit\n\nfit(Fabric(strategy='deepspeed'), 1, 2)\n"
        )
    path = tmp_path / "utils.py"
    loaded: set[str] = set()
    load_path = Workspace.load_path
    monkeypatch.setattr(
        Workspace, "load_path", lambda self, p, name=None: loaded.add(os.path.basename(p)) or load_path(self, p, name)
    )
    findings = Analyzer(Workspace(str(tmp_path)), FAB001_ONLY).analyze(path.read_text(), str(path))
    assert [(f.span.start.line + 1, f.severity.value) for f in findings] == ([(3, "error")] if callers == 3 else [])
    assert len({p for p in loaded if p.startswith("main_")}) == (callers if callers == 3 else 0)


def test_a_fault_at_one_call_site_is_logged_and_skipped(monkeypatch):
    from fabric_lsp.engine.program.infer import Inference

    src = program(
        'fabric = Fabric(strategy="xla")', setup="a = fabric.setup_optimizers(a)\nb = fabric.setup_optimizers(b)"
    )
    original = Inference.evaluate
    calls = []

    def flaky(self, node, module):
        calls.append(node.lineno)
        if len(calls) == 1:
            raise KeyError("boom")  # a bug inside inference for the first site
        return original(self, node, module)

    monkeypatch.setattr(Inference, "evaluate", flaky)
    logs: list[str] = []
    findings = Analyzer(Workspace(), FAB001_ONLY, log=logs.append).analyze(src)
    assert [f.span.start.line + 1 for f in findings] == [4]  # the other site is still reported
    assert any("site skipped" in m and "KeyError" in m for m in logs), logs


@pytest.mark.parametrize(
    "broken",
    [
        "tick_3 = step *",
        "loss = model(batch",
        "for i in range(3\n    pass",
        "def f(:\n    return 1",
        "if x ==\n    y = 1",
        "x = [1,\n     2",
    ],
)
def test_half_typed_statement_is_repaired_without_hiding_findings(broken):
    from fabric_lsp.engine.python.parse import parse

    src = program(
        'fabric = Fabric(strategy="deepspeed")',
        setup=f"model = fabric.setup_module(model)\n{broken}\noptimizer = fabric.setup_optimizers(optimizer)",
    )
    parsed = parse(src)
    assert parsed.tree is not None and parsed.broken_lines  # repaired, and marked as broken
    findings = run(src)
    assert [f.severity.value for f in findings] == ["error"]
    assert findings[0].fix is None  # never an edit on a file that does not parse


def test_an_evaluation_asked_outside_any_question_has_a_budget_of_its_own():
    """A rule's own question (``is_fabric_class`` reading a class's bases after an ``evaluate``)
    runs under a budget of its own, not under what an earlier question left behind."""
    body = "".join(f"    y{i} = {i}\n" for i in range(100))  # a hundred statements walked back over
    module = ModuleInfo(f"def f():\n    x = 1\n{body}    return x\n", None)
    inference = Inference()
    use = module.tree.body[0].body[-1].value
    assert inference.evaluate(module.tree.body[0].body[0].value, module)[0].value == 1
    assert [v.value for v in inference.ev(use, Ctx(module))] == [1]


@pytest.mark.parametrize("users", [2, 25])
def test_self_of_a_class_more_modules_use_than_are_followed(tmp_path, users):
    """``self.step`` in a method of a class few modules use is its own ``step`` and each
    subclass's override (one of them in another module); of a class more than
    ``MAX_CALLER_MODULES`` modules use (an API), its own ``step`` and an unknown override, none
    of those modules parsed; ``self`` is any instance of the class, its constructions not sought."""
    from fabric_lsp.engine.python.values import FuncRef, Instance

    (tmp_path / "loops.py").write_text(
        "class Loop:\n    def run(self):\n        return self.step()\n\n    def step(self):\n        return 1\n"
    )
    (tmp_path / "fast.py").write_text(
        "from loops import Loop\n\nclass Fast(Loop):\n    def step(self):\n        return 2\n\nFast().run()\n"
    )
    for i in range(users - 1):
        (tmp_path / f"user_{i}.py").write_text("from loops import Loop\n\nLoop().run()\n")
    workspace = Workspace(str(tmp_path))
    module = workspace.load_path(str(tmp_path / "loops.py"))
    run = module.tree.body[0].body[0]
    inference = Inference(workspace)
    selves = inference.evaluate(run.body[0].value.func.value, module)
    steps = inference.evaluate(run.body[0].value.func, module)
    owners = sorted(v.module.path.rsplit("/", 1)[-1] for v in steps if isinstance(v, FuncRef))
    if users == 2:
        assert owners == ["fast.py", "loops.py"] and not any(isinstance(v, Unknown) for v in steps)
        assert all(isinstance(v, Instance) and v.call is not None for v in selves)  # Loop() and Fast()
    else:
        assert owners == ["loops.py"] and any(isinstance(v, Unknown) for v in steps)
        assert [(type(v).__name__, v.call) for v in selves] == [("Instance", None)]
