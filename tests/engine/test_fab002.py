"""FAB002 (a collective reached on some ranks only): helpers whose body is a collective, a strategy
chosen by the device count, and the implicit collectives of sharded models."""

from __future__ import annotations

import textwrap

import pytest
from fabric_lsp.engine import Analyzer, Severity
from fabric_lsp.engine.workspace import Workspace
from fabric_lsp.rules import RULES_BY_CODE

FAB002 = RULES_BY_CODE["FAB002"]


def findings(source: str, workspace: Workspace | None = None, path: str | None = None):
    analyzer = Analyzer(workspace or Workspace(), [FAB002])
    return analyzer.analyze(textwrap.dedent(source).lstrip("\n"), path) if path else analyzer.analyze(
        textwrap.dedent(source).lstrip("\n")
    )


def severities(source: str) -> list[Severity]:
    return [f.severity for f in findings(source)]


# -- a strategy chosen by the device count ---------------------------------------------------------

GPUS = """
import argparse
from lightning.fabric import Fabric
parser = argparse.ArgumentParser()
parser.add_argument("--gpus", type=int, default={default})
args = parser.parse_args()
strategy = "ddp" if args.gpus > 1 else "auto"
fabric = Fabric({accelerator}devices=args.gpus, strategy=strategy)
fabric.launch()
if fabric.global_rank == 0:
    fabric.save("ckpt.pt", {{"model": model}})
"""


@pytest.mark.parametrize("default", [1, 2])
@pytest.mark.parametrize("accelerator", ["", 'accelerator="gpu", ', 'accelerator="cpu", '])
def test_strategy_chosen_by_the_gpu_count_is_a_warning(default, accelerator):
    assert severities(GPUS.format(default=default, accelerator=accelerator)) == [Severity.WARNING]


def test_strategy_chosen_by_the_gpu_count_in_statements():
    source = GPUS.format(default=1, accelerator="").replace(
        'strategy = "ddp" if args.gpus > 1 else "auto"',
        'if args.gpus > 1:\n    strategy = "ddp"\nelse:\n    strategy = "auto"',
    )
    assert severities(source) == [Severity.WARNING]


def test_one_gpu_only_stays_silent():
    source = GPUS.format(default=1, accelerator="").replace('"ddp" if args.gpus > 1 else "auto"', '"ddp" if args.gpus > 8 else "auto"')
    source = source.replace("devices=args.gpus", "devices=1")
    assert severities(source) == []
