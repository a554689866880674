"""The configuration model made visible (engine/semantic/describe.py), without the server: hover text and
inlay hints from the scenarios the semantic model gives."""

from __future__ import annotations

from fabric_lsp.engine import Analyzer
from fabric_lsp.engine.findings import Pos
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import ALL_RULES

ANALYZER = Analyzer(Workspace(), ALL_RULES)


def _analysis(source: str):
    return ANALYZER.analysis(source, "/project/train.py")


def test_a_configuration_that_raises_says_so_with_the_values_that_chose_it():
    source = 'from lightning.fabric import Fabric\nfabric = Fabric(accelerator="cpu", strategy="fsdp")\n'
    analysis = _analysis(source)
    [hint] = analysis.hints()
    assert hint.label == "raises ValueError on CPU"
    assert hint.pos == Pos(1, len(source.splitlines()[1]))
    value = analysis.hover(Pos(1, 1))
    assert (
        "`Fabric(...)` raises `ValueError`: You selected the FSDP strategy but FSDP is only available on GPU" in value
    )
    assert 'accelerator="cpu" (train.py:2), strategy="fsdp" (train.py:2)' in value


def test_a_strategy_not_known_statically():
    analysis = _analysis("from lightning.fabric import Fabric\nfabric = Fabric(strategy=pick())\n")
    assert [h.label for h in analysis.hints()] == ["not known statically"]
    assert "not known statically: `strategy`" in analysis.hover(Pos(1, 1))


def test_values_from_the_command_line_name_the_option_and_assumed_values_are_marked():
    source = (
        "import argparse\n"
        "from lightning.fabric import Fabric\n"
        "parser = argparse.ArgumentParser()\n"
        'parser.add_argument("--strategy", choices=["ddp", "deepspeed"], default="ddp")\n'
        "args = parser.parse_args()\n"
        'fabric = Fabric(accelerator="cuda", strategy=args.strategy, devices=args.devices)\n'
    )
    analysis = _analysis(source)
    value = analysis.hover(Pos(5, 1))
    assert "4 configurations" in value  # 2 strategies x the representatives of the unknown devices
    assert 'strategy: `DeepSpeedStrategy` — "deepspeed" from the choices of `--strategy` (train.py:4)' in value
    assert "`args.devices` is not known statically (assumed) (train.py:6)" in value
    assert [h.label for h in analysis.hints()] == ["4 configurations"]


def test_strategy_object_settings_and_the_rules_hover_come_first():
    source = (
        "from lightning.fabric import Fabric\n"
        "from lightning.fabric.strategies import DeepSpeedStrategy\n"
        'fabric = Fabric(accelerator="cuda", devices=2, strategy=DeepSpeedStrategy(stage=3))\n'
        "model = fabric.setup_module(model)\n"
        "optimizer = fabric.setup_optimizers(optimizer)\n"
    )
    analysis = _analysis(source)
    value = analysis.hover(Pos(4, len("optimizer = fab")))
    rules, configurations = value.split("\n\n---\n\n")
    assert "certainly DeepSpeed/XLA" in rules  # FAB001's verdict, as before
    assert "strategy: `DeepSpeedStrategy` (stage=3) — `DeepSpeedStrategy(stage=3)` (train.py:3)" in configurations
    assert [h.label for h in analysis.hints()] == [
        "DeepSpeedStrategy · CUDA ×2 · 2 processes · 32-true · subprocess script"
    ]


def test_no_configuration_hover_away_from_a_fabric():
    analysis = _analysis("from lightning.fabric import Fabric\nfabric = Fabric()\nx = 1\nprint(x)\n")
    assert analysis.hover(Pos(3, 7)) is None
    assert analysis.hover(Pos(2, 0)) is None


def test_hints_without_any_rule_running():
    """No rule's prefilter matches (only FAB001 selected, no `setup_optimizers`): the document's
    Fabrics are still described."""
    from fabric_lsp.rules import RULES_BY_CODE

    analysis = Analyzer(Workspace(), [RULES_BY_CODE["FAB001"]]).analysis(
        'from lightning.fabric import Fabric\nfabric = Fabric(accelerator="cpu")\n', "/project/train.py"
    )
    assert analysis.verdicts == []
    assert [h.label for h in analysis.hints()] == ["SingleDeviceStrategy · CPU · 1 process · 32-true"]
    assert "1 configuration" in analysis.hover(Pos(1, 1))


def test_strategy_arguments_not_known_statically_are_marked():
    source = (
        "from lightning.fabric import Fabric\n"
        "from lightning.fabric.strategies import FSDPStrategy\n"
        'fabric = Fabric(accelerator="cuda", strategy=FSDPStrategy(use_orig_params=flag, sharding_strategy="HYBRID_SHARD"))\n'
    )
    value = _analysis(source).hover(Pos(2, 1))
    assert "strategy: `FSDPStrategy` (use_orig_params=?, sharding_strategy='HYBRID_SHARD')" in value


def test_a_trainer_is_resolved_by_the_trainer_connector_on_each_path():
    source = (
        "import lightning.pytorch as pl\n"
        "import pytorch_lightning\n"
        'a = pl.Trainer(accelerator="gpu", devices=4, precision="bf16-mixed")\n'
        'b = pytorch_lightning.Trainer(accelerator="cpu", strategy="fsdp")\n'
        "c = pl.Trainer(strategy=pick())\n"
    )
    analysis = _analysis(source)
    labels = [h.label for h in analysis.hints()]
    assert labels[0] == "DDPStrategy · CUDA ×4 · 4 processes · bf16-mixed · subprocess script"
    assert labels[1] == "raises ValueError on CPU"
    assert labels[2] == "not known statically"
    assert "`Trainer(...)` raises" in analysis.hover(Pos(3, 1))
