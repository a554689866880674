"""engine/program/setups.py: which set-up models compute a tensor, where a model was set up, the Fabric in
scope; engine/program/judge.py: the certainty model over scenarios."""

from __future__ import annotations

import ast
import textwrap

import pytest
from fabric_lsp import facts
from fabric_lsp.engine.findings import Certainty
from fabric_lsp.engine.lightning import connector as lightning
from fabric_lsp.engine.lightning.configurations import Scenario
from fabric_lsp.engine.program.setups import fabric_in_scope
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.semantic.certainty import judge
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.engine.workspace.workspace import Workspace


def _model(src: str) -> SemanticModel:
    return SemanticModel(ModuleInfo(textwrap.dedent(src).lstrip()), Workspace())


def _backward_receiver(model: SemanticModel, n: int = 0) -> ast.expr:
    return model.method_calls("backward")[n].func.value


def _models(model: SemanticModel, n: int = 0) -> list[str]:
    uses = model.models_computing(_backward_receiver(model, n))
    return sorted({model.segment(u.expr) for u in uses})


HEAD = "from lightning.fabric import Fabric\nfabric = Fabric()\n"


@pytest.mark.parametrize(
    "body, expected",
    [
        ("model, opt = fabric.setup(model, opt)\nloss = crit(model(x), y)\nloss.backward()\n", ["model"]),
        ("model = fabric.setup_module(model)\nout = model.forward(x)\n(out.loss / 2).backward()\n", ["model"]),
        ("model = fabric.setup(model)\nloss = compute_loss(model, batch)\nloss.backward()\n", ["model"]),
        # the raw module bypasses the wrapper: no hook
        ("model = fabric.setup(model)\nmodel.module(x).sum().backward()\n", []),
        # a model that was not set up
        ("probe = torch.nn.Linear(2, 2)\nprobe(x).sum().backward()\n", []),
        # detach and no_grad cut the graph
        (
            "g = fabric.setup(g)\nd = fabric.setup(d)\nfake = g(z)\nloss = d(fake.detach()).mean()\nloss.backward()\n",
            ["d"],
        ),
        (
            "t = fabric.setup(t)\ns = fabric.setup(s)\nwith torch.no_grad():\n    tl = t(x)\nloss = kl(s(x), tl)\nloss.backward()\n",
            ["s"],
        ),
        # an augmented loss
        ("m = fabric.setup(m)\nloss = 0\nloss += m(x).sum()\nloss.backward()\n", ["m"]),
    ],
)
def test_models_computing_a_tensor(body, expected):
    assert _models(_model(HEAD + body)) == expected


def test_models_through_parameters_and_self_attributes():
    model = _model(
        """
        from lightning.fabric import Fabric

        class Trainer:
            def fit(self, net, opt):
                self.fabric = Fabric(precision="bf16-mixed")
                self.net, self.opt = self.fabric.setup(net, opt)

            def step(self, x):
                self.net(x).sum().backward()

        def train(fabric, model, x):
            loss = model(x).sum()
            loss.backward()

        fabric = Fabric()
        m = fabric.setup(m)
        train(fabric, m, x)
        """
    )
    assert _models(model, 0) == ["self.net"]
    assert _models(model, 1) == ["model"]


def test_a_model_handed_on_through_many_helpers_is_searched_once_per_parameter(monkeypatch):
    # MolPilot's validation callback: helpers calling each other with the model, each twice; the
    # call sites of every parameter were searched once per call chain (exponential in the depth)
    from fabric_lsp.engine.program import setups

    helpers = "".join(
        f"def h{i}(model, x):\n" + "".join(f"    h{i + 1}(model, x + {k})\n" for k in range(3)) + "\n" for i in range(4)
    )
    source = f"""
from lightning.fabric import Fabric

{helpers}def h4(model, x):
    model(x).sum().backward()

fabric = Fabric()
m = fabric.setup(m)
h0(m, x)
"""
    searched: list[str] = []
    real = setups.calls.call_sites

    def counted(inference, func, *args, **kwargs):
        searched.append(func.name)
        return real(inference, func, *args, **kwargs)

    monkeypatch.setattr(setups.calls, "call_sites", counted)
    model = SemanticModel(ModuleInfo(textwrap.dedent(source).lstrip()), Workspace())
    assert _models(model) == ["model"]
    assert set(searched) == {"h0", "h1", "h2", "h3", "h4"}
    assert len(searched) < 10  # one search per chain: 1 + 3 + 9 + 27 + 81


def test_a_project_class_named_fabric_sets_up_nothing():
    model = _model(
        """
        class Fabric:
            def setup(self, m): return m
        fabric = Fabric()
        m = fabric.setup(m)
        m(x).sum().backward()
        """
    )
    assert model.setup_calls() == [] and _models(model) == []


def test_setup_call_counts_optimizers():
    model = _model(
        HEAD
        + "a = fabric.setup(m)\nb = fabric.setup(m, o1, o2)\nc = fabric.setup(m, *opts)\nd = fabric.setup_module(m)\n"
    )
    assert [s.optimizers for s in model.setup_calls()] == [0, 2, None, 0]


def test_fabric_in_scope():
    model = _model(
        """
        from lightning.fabric import Fabric

        def train(fab, model):
            model(x).sum().backward()

        def orphan(model):
            model(x).sum().backward()

        fabric = Fabric(precision="16-mixed")
        m = fabric.setup(m)
        train(fabric, m)
        orphan(m)
        """
    )
    calls = model.method_calls("backward")
    uses = model.models_computing(calls[0].func.value)
    fabrics = list(uses[0].setup.fabrics)
    assert fabric_in_scope(model.setups, calls[0], model.module, fabrics) == "fab"
    # `orphan` has no expression for the Fabric; the module-level name is not read there
    assert fabric_in_scope(model.setups, calls[1], model.module, fabrics) is None


def _scenario(precision_plugin: str | None, error: bool = False, known: bool = True) -> Scenario:
    if not known:
        return Scenario(None, None, unknown=("`precision`: free string",))
    outcome = lightning.Outcome(
        host=lightning.CPU,
        error=lightning.ConnectorError("ValueError", "boom") if error else None,
        precision_plugin=precision_plugin,
    )
    # each plugin from its own `precision=` value: scenarios with the same arguments on the same
    # machine have the same outcome (and are one group of the certainty model)
    return Scenario(lightning.FabricArgs(precision=precision_plugin), outcome)


def _fails(s: Scenario):
    return facts.precision_plugin_requires_fabric_backward(s.outcome.precision_plugin)


@pytest.mark.parametrize(
    "plugins, certainty",
    [
        (["MixedPrecision"], Certainty.CERTAIN),
        (["MixedPrecision", "Precision"], Certainty.POSSIBLE),
        (["MixedPrecision", None], Certainty.POSSIBLE),  # None: an unknown scenario
        (["Precision", None], Certainty.UNKNOWN),
        (["Precision", "HalfPrecision"], None),
        (["FSDPPrecision", "error"], Certainty.CERTAIN),  # Fabric(...) itself raises there
        (["MyPlugin"], Certainty.UNKNOWN),  # a plugin class the facts do not know
    ],
)
def test_judge(plugins, certainty):
    scenarios = [
        _scenario(None, known=False)
        if p is None
        else _scenario("Precision", error=True)
        if p == "error"
        else _scenario(p)
        for p in plugins
    ]
    assert judge(scenarios, _fails).certainty is certainty


def test_precision_plugin_facts_follow_the_source():
    # plugins/precision/{amp,deepspeed,fsdp}.py override backward; the others do not
    assert {p for p in facts.PLUGIN_CLASSES if facts.precision_plugin_requires_fabric_backward(p)} == {
        "MixedPrecision",
        "DeepSpeedPrecision",
        "FSDPPrecision",
    }


@pytest.mark.parametrize(
    "strategy, stage",
    [
        ("deepspeed", 2),
        ("deepspeed_stage_1", 1),
        ("deepspeed_stage_3_offload", 3),
        ("ddp", None),
        (lightning.Obj("DeepSpeedStrategy", (("stage", 3),)), 3),
        (lightning.Obj("DeepSpeedStrategy"), None),
    ],
)
def test_deepspeed_stage(strategy, stage):
    assert facts.deepspeed_stage(strategy) == stage


def test_relevant_setups_and_branches():
    from fabric_lsp.engine.program.setups import relevant_setups, under_if

    model = _model(
        """
        from lightning.fabric import Fabric
        fabric = Fabric()

        def gan(g, d):
            g = fabric.setup(g)
            if use_critic:
                d = fabric.setup(d)
            fabric.backward(d(g(z)).mean())

        def other(c):
            c = fabric.setup(c)
            fabric.backward(c(x).sum())
        """
    )
    gan_backward, other_backward = model.method_calls("backward")
    fabrics = list(model.setup_calls()[0].fabrics)
    gan = relevant_setups(model.setups, gan_backward, gan_backward.args[0], model.module, fabrics)
    assert [model.segment(c.args[0]) for c in gan] == ["g", "d"]
    assert [under_if(model.module, c) for c in gan] == [False, True]
    other = relevant_setups(model.setups, other_backward, other_backward.args[0], model.module, fabrics)
    assert [model.segment(c.args[0]) for c in other] == ["c"]


def test_module_level_names_do_not_see_function_bodies():
    # `model` inside `helper` is a local of helper, not the module's set-up model
    model = _model(
        """
        from lightning.fabric import Fabric
        fabric = Fabric(precision="bf16-mixed")

        def helper():
            model = fabric.setup(net)

        model(x).sum().backward()
        """
    )
    assert _models(model) == []


@pytest.mark.parametrize(
    "body, expected",
    [
        ("model, opt = fabric.setup(model, opt)\nuse(opt)\n", 1),  # after the model in setup's result
        ("model = fabric.setup_module(model)\nopt = fabric.setup_optimizers(opt)\nuse(opt)\n", 1),
        ("model, opt = fabric.setup(model, opt)\nuse(model)\n", 0),  # the model is not an optimizer
        ("opt = torch.optim.SGD(params)\nuse(opt)\n", 0),  # not set up through Fabric
        ("opt = other.setup_optimizers(opt)\nuse(opt)\n", 0),  # not a Fabric
    ],
)
def test_set_up_optimizers(body, expected):
    model = _model(HEAD + body)
    (use,) = [c for c in ast.walk(model.module.tree) if isinstance(c, ast.Call) and getattr(c.func, "id", "") == "use"]
    assert len(model.set_up_optimizers(use.args[0])) == expected
