"""Feasible configurations: a Fabric's configuration is the values of one consistent path through
the code, not a product of each argument's possible values (the truth issue's shapes, each in a
minimal example of our own: silent where no path fails, reported with the right severity where
one does)."""

from __future__ import annotations

import ast
import textwrap

import pytest
from fabric_lsp.engine import Analyzer
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import RULES_BY_CODE

HEAD = """\
import argparse
from lightning.fabric import Fabric
from lightning.fabric.strategies import DeepSpeedStrategy, FSDPStrategy, XLAStrategy
"""


def severities(src: str, code: str) -> list[str]:
    text = HEAD + textwrap.dedent(src)
    ast.parse(text)  # a broken example would make every assertion of silence vacuous
    found = Analyzer(Workspace(), [RULES_BY_CODE[code]]).analyze(text, "/tmp/t.py")
    return [f.severity.name.lower() for f in found if f.code == code]


# 1. values chosen together by one condition go together -----------------------------------------
CHOSEN_TOGETHER = """
parser = argparse.ArgumentParser()
parser.add_argument("--tpu", action="store_true")
args = parser.parse_args()
precision = "32-true" if args.tpu else "bf16-mixed"
strategy = XLAStrategy() if args.tpu else FSDPStrategy()
fabric = Fabric(strategy=strategy, precision=precision)
"""


def test_a_conditional_expression_on_one_test_gives_two_configurations_not_four():
    assert severities(CHOSEN_TOGETHER, "FAB008") == []


def test_values_chosen_by_different_tests_still_combine():
    src = CHOSEN_TOGETHER.replace('if args.tpu else "bf16', 'if args.fast else "bf16').replace(
        "args = ", 'parser.add_argument("--fast", action="store_true")\nargs = '
    )
    assert severities(src, "FAB008") == ["warning"]


def test_an_if_block_assigning_several_names_is_one_path():
    src = """
    def main(devices: int):
        if devices > 1:
            strategy = DeepSpeedStrategy(stage=3)
            precision = "16-mixed"
        else:
            strategy = "auto"
            precision = "32-true"
        fabric = Fabric(accelerator="cuda", devices=devices, strategy=strategy, precision=precision)
        fabric.launch()
        model = fabric.setup_module(model)
        optimizer = fabric.setup_optimizers(optimizer)

    main(1)
    """
    assert severities(src, "FAB001") == []
    assert severities(src.replace("main(1)", "main(1)\n    main(4)"), "FAB001") == ["warning"]


# 2. conditions fold on the values the program has ------------------------------------------------
SEPARATE_SETUP = """
        fabric.launch()
        model = fabric.setup_module(model)
        optimizer = fabric.setup_optimizers(optimizer)
"""


def test_a_module_constant_decides_a_conditional_strategy():
    src = (
        """
    devices = 1
    def main():
        fabric = Fabric(accelerator="cuda", devices=devices, strategy=DeepSpeedStrategy() if devices > 1 else "auto")
    """
        + SEPARATE_SETUP
        + "\n    main()\n"
    )
    assert severities(src, "FAB001") == []
    assert severities(src.replace("devices = 1", "devices = 2"), "FAB001") == ["error"]


def test_a_parameter_default_no_call_overrides_decides_a_branch():
    src = (
        """
    def setup(tpu=False):
        fabric = Fabric(accelerator="tpu" if tpu else "cuda", devices=8)
    """
        + SEPARATE_SETUP
        + "\n    setup()\n"
    )
    assert severities(src, "FAB001") == []
    assert severities(src.replace("setup()\n", "setup()\n    setup(tpu=True)\n"), "FAB001") == ["warning"]


# 3. helpers are evaluated with the call's arguments ---------------------------------------------
def test_a_helper_returns_what_its_arguments_select():
    src = """
    def default_precision(training: bool) -> str:
        if training:
            return "16-mixed"
        return "32-true"

    fabric = Fabric(accelerator="cpu", precision=default_precision(training=False))
    """
    assert severities(src, "FAB008") == []
    assert severities(src.replace("training=False", "training=True"), "FAB008") == ["warning"]


# 4. `if x is None: x = ...` removes None ----------------------------------------------------------
def test_a_none_replaced_before_use_is_not_none():
    src = """
    def main(devices=None):
        if devices is None:
            devices = 1
        fabric = Fabric(accelerator="cpu", devices=devices)

    main()
    """
    assert severities(src, "FAB008") == []


def test_a_none_replaced_only_on_one_branch_stays_possible():
    src = """
    def main(devices=None, fill=False):
        if fill:
            devices = 1
        fabric = Fabric(accelerator="cpu", devices=devices)

    main()
    """
    assert severities(src, "FAB008") == ["error"]


# 5. raise guards prune the paths they raise on ----------------------------------------------------
def test_a_raise_guard_on_a_derived_value_prunes_the_multi_device_path():
    src = (
        """
    parser = argparse.ArgumentParser()
    parser.add_argument("--devices", type=int, choices=[1, 2, 4], default=1)
    args = parser.parse_args()

    def main():
        n = args.devices
        if n > 1:
            raise NotImplementedError("one device only")
        fabric = Fabric(accelerator="cuda", devices=n, strategy="deepspeed" if n > 1 else "auto")
    """
        + SEPARATE_SETUP
        + "\n    main()\n"
    )
    assert severities(src, "FAB001") == []
    assert severities(src.replace("raise NotImplementedError", "print"), "FAB001") == ["warning"]


def test_an_early_return_guards_the_rest_of_a_helper():
    src = (
        """
    def strategy_for(devices):
        if devices == 1:
            return "auto"
        return DeepSpeedStrategy()

    def main():
        fabric = Fabric(accelerator="cuda", devices=1, strategy=strategy_for(1))
    """
        + SEPARATE_SETUP
    )
    assert severities(src, "FAB001") == []


# 6. machine facts are never certain ---------------------------------------------------------------
@pytest.mark.parametrize("devices", ["", ', devices="auto"', ", devices=-1"])
def test_how_many_gpus_the_machine_has_is_not_certain(devices):
    src = f"""
    fabric = Fabric(accelerator="cuda"{devices})
    model = fabric.setup(model)
    """
    assert severities(src, "FAB007") == ["warning"]


def test_a_count_the_code_fixes_is_certain():
    src = """
    fabric = Fabric(accelerator="cuda", devices=4)
    model = fabric.setup(model)
    """
    assert severities(src, "FAB007") == ["error"]


# 8. messages name feasible configurations only ----------------------------------------------------
def test_the_message_lists_only_strategies_a_path_can_give():
    src = """
    parser = argparse.ArgumentParser()
    parser.add_argument("--tpu", action="store_true")
    args = parser.parse_args()
    if args.tpu:
        strategy, devices = XLAStrategy(), 8
    else:
        strategy, devices = FSDPStrategy(), 1
    fabric = Fabric(accelerator="tpu" if args.tpu else "cuda", strategy=strategy, devices=devices)
    fabric.launch()
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(optimizer)
    """
    text = HEAD + textwrap.dedent(src)
    [finding] = [
        f for f in Analyzer(Workspace(), [RULES_BY_CODE["FAB001"]]).analyze(text, "/tmp/t.py") if f.code == "FAB001"
    ]
    assert finding.severity.name == "WARNING"
    assert "XLAStrategy" in finding.message and "DDPStrategy" not in finding.message


# a value not known keeps its identity through the calls that pass it -----------------------------
def test_a_flag_tested_in_a_helper_goes_the_way_the_caller_chose():
    src = """
    def prec(tpu):
        if tpu:
            return "32-true"
        return "16-mixed"

    def setup(tpu=False):
        strategy = XLAStrategy() if tpu else FSDPStrategy()
        fabric = Fabric(devices=8, strategy=strategy, precision=prec(tpu))

    if __name__ == "__main__":
        from jsonargparse import CLI
        CLI(setup)
    """
    assert severities(src, "FAB008") == []
    # the same helper called with another flag: XLA with 16-mixed is a path again
    src2 = src.replace("prec(tpu)", "prec(fast)").replace("tpu=False)", "tpu=False, fast=False)")
    assert severities(src2, "FAB008") == ["warning"]


# 2. values followed the way real code passes them ------------------------------------------------
def test_a_match_statement_selects_one_case():
    src = (
        """
    def build(kind: str):
        match kind:
            case "big":
                strategy = "deepspeed"
            case _:
                strategy = "ddp"
        return Fabric(accelerator="cuda", devices=2, strategy=strategy)

    def main():
        fabric = build("big")
    """
        + SEPARATE_SETUP
        + "\n    main()\n"
    )
    assert severities(src, "FAB001") == ["error"]
    assert severities(src.replace('build("big")', 'build("small")'), "FAB001") == []


def test_hooks_run_by_fabric_call_get_its_arguments():
    src = """
    class Hooks:
        def on_train_start(self, fabric, model, optimizer):
            model = fabric.setup_module(model)
            optimizer = fabric.setup_optimizers(optimizer)

    fabric = Fabric(accelerator="cuda", devices=2, strategy="deepspeed", callbacks=[Hooks()])
    fabric.launch()
    fabric.call("on_train_start", fabric, model, optimizer)
    """
    assert severities(src, "FAB001") == ["error"]
    assert severities(src.replace('strategy="deepspeed"', 'strategy="ddp"'), "FAB001") == []


def test_merged_dicts_and_loops_over_literal_tuples():
    merged = """
    defaults = {"accelerator": "cuda", "devices": 2, "strategy": "ddp"}
    fabric = Fabric(**{**defaults, "strategy": "deepspeed"})
    """ + SEPARATE_SETUP.replace("        ", "    ")
    assert severities(merged, "FAB001") == ["error"]
    loop = (
        """
    for strategy in ("deepspeed", "deepspeed_stage_3"):
        fabric = Fabric(accelerator="cuda", devices=2, strategy=strategy)
    """
        + SEPARATE_SETUP
    )
    assert severities(loop, "FAB001") == ["error"]


# 3. an entry point exposed to a CLI takes what the CLI allows -------------------------------------
def test_a_typer_option_default_is_what_runs_as_shipped():
    src = (
        """
    import typer

    def main(strategy: str = typer.Option("deepspeed"), devices: int = 2):
        fabric = Fabric(accelerator="cuda", devices=devices, strategy=strategy)
    """
        + SEPARATE_SETUP
        + """
    if __name__ == "__main__":
        typer.run(main)
    """
    )
    assert severities(src, "FAB001") == ["warning"]
    assert severities(src.replace('typer.Option("deepspeed")', 'typer.Option("ddp")'), "FAB001") == []


def test_arithmetic_on_known_numbers_folds_a_condition():
    src = (
        """
    devices, num_nodes = 1, 1
    def main():
        strategy = DeepSpeedStrategy() if devices * num_nodes > 1 else "auto"
        fabric = Fabric(accelerator="cuda", devices=devices, num_nodes=num_nodes, strategy=strategy)
    """
        + SEPARATE_SETUP
        + "\n    main()\n"
    )
    assert severities(src, "FAB001") == []
    assert severities(src.replace("devices, num_nodes = 1, 1", "devices, num_nodes = 2, 1"), "FAB001") == ["error"]


def test_the_same_values_on_many_paths_do_not_crowd_out_another_configuration():
    # several parameters a command line fills, each tested on the way: many paths give the same
    # values, and the CPU configuration (FSDP refused on CPU) must still be among those judged
    src = """
    import torch

    def setup(devices: int = 1, num_nodes: int = 1, precision: str | None = None, accelerator: str | None = None):
        if accelerator is None:
            accelerator = "cuda" if torch.cuda.is_available() else "cpu"
        precision = precision or ("bf16-mixed" if torch.cuda.is_available() else "32-true")
        if devices * num_nodes > 1:
            strategy = FSDPStrategy()
        else:
            strategy = "auto"
        fabric = Fabric(devices=devices, num_nodes=num_nodes, strategy=strategy, precision=precision, accelerator=accelerator)

    if __name__ == "__main__":
        from jsonargparse import CLI
        CLI(setup)
    """
    assert severities(src, "FAB008") == ["warning"]
    guarded = src.replace("if devices * num_nodes > 1:", 'if accelerator != "cpu" and devices * num_nodes > 1:')
    assert severities(guarded, "FAB008") == []


def test_a_call_with_an_unpacked_tuple_binds_its_items():
    src = (
        """
    def build(strategy, devices):
        return Fabric(accelerator="cuda", devices=devices, strategy=strategy)

    def main():
        args = ("deepspeed", 2)
        fabric = build(*args)
    """
        + SEPARATE_SETUP
        + "\n    main()\n"
    )
    assert severities(src, "FAB001") == ["error"]
    assert severities(src.replace('("deepspeed", 2)', '("ddp", 2)'), "FAB001") == []
    # a list may be appended to before the call: its items are not taken as the arguments
    assert severities(src.replace('("deepspeed", 2)', '["deepspeed", 2]'), "FAB001") != ["error"]


def test_a_call_site_with_an_unpacked_tuple_fills_the_parameters():
    src = (
        """
    def build(strategy, devices):
        fabric = Fabric(accelerator="cuda", devices=devices, strategy=strategy)
    """
        + SEPARATE_SETUP
        + """
    args = ("deepspeed", 2)
    build(*args)
    """
    )
    assert severities(src, "FAB001") == ["error"]
    assert severities(src.replace('("deepspeed", 2)', '("ddp", 2)'), "FAB001") == []


# a dataclass field typed `Literal[...]`, filled from the command line (tyro, LightningCLI): one choice
LITERAL_FIELD = """
from dataclasses import dataclass
from typing import Literal

import tyro


@dataclass
class Config:
    accelerator: Literal["auto", "cuda", "mps", "cpu"] = "auto"


def main():
    args = tyro.cli(Config)
    if args.accelerator == "cuda":
        devices = 2
    else:
        devices = 1
    fabric = Fabric(accelerator=args.accelerator, strategy="ddp" if devices > 1 else "auto", devices=devices)
"""


def test_every_read_of_a_literal_field_takes_the_same_choice():
    # "ddp" only where the accelerator is "cuda": never DDP on MPS (Lightning refuses that pair)
    assert severities(LITERAL_FIELD, "FAB008") == []
    both_ways = LITERAL_FIELD.replace('if args.accelerator == "cuda":', "if devices_wanted > 1:").replace(
        "def main():", "def main(devices_wanted: int = 2):"
    )
    assert severities(both_ways, "FAB008") == ["warning"]  # ddp with accelerator="mps" is a path
