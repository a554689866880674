"""FAB009: joint setup where the strategy needs separate setup — certainty, meta-device models,
guards, and the unsafe reverse rewrite."""

from __future__ import annotations

import ast
import textwrap

import pytest
from fabric_lsp.engine import Analyzer
from fabric_lsp.engine.findings import Certainty, Severity
from fabric_lsp.engine.python.text import apply_edits
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import RULES_BY_CODE


def run(source: str):
    analyzer = Analyzer(Workspace(), [RULES_BY_CODE["FAB009"]])
    return analyzer.analyze(textwrap.dedent(source).lstrip("\n"))


HEAD = """
import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import FSDPStrategy
"""


def test_meta_model_for_a_value_not_known_is_a_warning():
    [f] = run(
        HEAD
        + """
fabric = Fabric(strategy="fsdp")
with fabric.init_module(empty_init=args.empty):
    model = torch.nn.Linear(4, 2)
optimizer = torch.optim.AdamW(model.parameters())
model, optimizer = fabric.setup(model, optimizer)
"""
    )
    assert f.severity is Severity.WARNING and "meta-device" in f.message


def test_meta_model_in_a_branch_is_a_warning():
    [f] = run(
        HEAD
        + """
fabric = Fabric(strategy="fsdp")
if big:
    with fabric.init_module(empty_init=True):
        model = torch.nn.Linear(4, 2)
optimizer = torch.optim.AdamW(model.parameters())
model, optimizer = fabric.setup(model, optimizer)
"""
    )
    assert f.certainty is Certainty.POSSIBLE


def test_torch_meta_device_context_under_fsdp():
    [f] = run(
        HEAD
        + """
fabric = Fabric(strategy="fsdp")
with torch.device("meta"):
    model = torch.nn.Linear(4, 2)
optimizer = torch.optim.AdamW(model.parameters())
model, optimizer = fabric.setup(model, optimizer)
"""
    )
    assert f.severity is Severity.ERROR


@pytest.mark.parametrize("strategy", ['"ddp"', '"deepspeed"', '"fsdp"', "FSDPStrategy()", '"auto"'])
def test_meta_model_outside_fsdp_or_plain_fsdp_is_silent(strategy):
    empty = "True" if strategy not in ('"fsdp"', "FSDPStrategy()") else "False"
    assert (
        run(
            HEAD
            + f"""
fabric = Fabric(strategy={strategy})
with fabric.init_module(empty_init={empty}):
    model = torch.nn.Linear(4, 2)
optimizer = torch.optim.AdamW(model.parameters())
model, optimizer = fabric.setup(model, optimizer)
"""
        )
        == []
    )


def test_a_conditional_strategy_is_a_warning_and_the_fix_is_offered():
    [f] = run(
        HEAD
        + """
fabric = Fabric(strategy=FSDPStrategy(use_orig_params=False) if sharded else "ddp")
optimizer = torch.optim.AdamW(model.parameters())
model, optimizer = fabric.setup(model, optimizer)
"""
    )
    assert f.severity is Severity.WARNING and f.fix is not None


def test_an_isinstance_guard_narrows_the_strategy():
    assert (
        run(
            HEAD
            + """
from lightning.fabric.strategies import XLAFSDPStrategy
fabric = Fabric(strategy="xla_fsdp" if tpu else "ddp")
if not isinstance(fabric.strategy, XLAFSDPStrategy):
    model, optimizer = fabric.setup(model, optimizer)
"""
        )
        == []
    )


def test_unknown_strategy_is_silent_by_default():
    source = (
        HEAD
        + """
def train(fabric, model, optimizer):
    model, optimizer = fabric.setup(model, optimizer)
"""
    )
    assert run(source) == []


@pytest.mark.parametrize(
    "between, reason",
    [
        ("model.requires_grad_(False)", "is used between"),
        ("scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1)", "is used between"),
        ("lr = 0.5", "reassigned before the setup"),
        ("if stop:\n    raise SystemExit", "may leave the block"),
    ],
)
def test_no_fix_when_statements_between_depend_on_the_order(between, reason):
    [f] = run(
        HEAD
        + f"""
fabric = Fabric(strategy="xla_fsdp")
optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
{between}
model, optimizer = fabric.setup(model, optimizer)
"""
    )
    assert f.fix is None and reason in f.message.split("No automatic fix:", 1)[1]


@pytest.mark.parametrize(
    "setup, reason",
    [
        ("model, optimizer, scheduler = fabric.setup(model, optimizer, scheduler=scheduler)", "keyword argument"),
        ("model, o1, o2 = fabric.setup(model, optimizer, other)", "several optimizers"),
        ("fabric.setup(model, optimizer)", "plain assignment"),
    ],
)
def test_no_fix_for_shapes_the_rewrite_does_not_handle(setup, reason):
    [f] = run(
        HEAD
        + f"""
fabric = Fabric(strategy="xla_fsdp")
optimizer = torch.optim.AdamW(model.parameters())
{setup}
"""
    )
    assert f.fix is None and reason in f.message


def test_fix_keeps_module_setup_keywords_and_indentation_and_rechecks_clean():
    source = textwrap.dedent(
        HEAD
        + """
def main(fabric_args):
    fabric = Fabric(strategy="xla_fsdp")
    model = build()
    optimizer = torch.optim.AdamW(
        model.parameters(),
        lr=1e-4,
    )
    model, optimizer = fabric.setup(model, optimizer, move_to_device=False)
    return model
"""
    ).lstrip("\n")
    analyzer = Analyzer(Workspace(), [RULES_BY_CODE["FAB009"]])
    [f] = analyzer.analyze(source)
    assert f.fix is not None and f.fix.applicability.value == "unsafe"
    fixed = apply_edits(source, f.fix.edits)
    ast.parse(fixed)
    assert "    model = fabric.setup_module(model, move_to_device=False)\n    optimizer = torch.optim.AdamW(\n" in fixed
    assert "    optimizer = fabric.setup_optimizers(optimizer)\n    return model\n" in fixed
    assert analyzer.analyze(fixed) == []


def test_the_optimizer_built_in_another_function_gets_no_fix():
    [f] = run(
        HEAD
        + """
def make(model):
    return torch.optim.AdamW(model.parameters())
fabric = Fabric(strategy="xla_fsdp")
model, optimizer = fabric.setup(model, make(model))
"""
    )
    assert f.fix is None


@pytest.mark.parametrize(
    "materialize", ["model.to_empty(device=fabric.device)", "model.load_state_dict(sd, assign=True)"]
)
def test_a_model_materialized_before_the_optimizer_is_not_on_the_meta_device(materialize):
    assert (
        run(
            HEAD
            + f"""
fabric = Fabric(strategy="fsdp")
with fabric.init_module(empty_init=True):
    model = torch.nn.Linear(4, 2)
{materialize}
optimizer = torch.optim.AdamW(model.parameters())
model, optimizer = fabric.setup(model, optimizer)
"""
        )
        == []
    )
