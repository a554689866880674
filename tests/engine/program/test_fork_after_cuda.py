"""FAB011's fork-after-CUDA check: a fork-based launch in a notebook after a top-level statement
that certainly initialises CUDA (engine/interactive.cuda_initialised_before)."""

from __future__ import annotations

import textwrap

import pytest
from fabric_lsp.engine import Analyzer
from fabric_lsp.engine.lightning.interactive import cuda_initialised_before
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import RULES_BY_CODE

NOTEBOOK = """
import torch
from lightning.fabric import Fabric

{before}


def train(fabric):
    pass


fabric = Fabric(accelerator="{accelerator}", devices=2, strategy="{strategy}")
fabric.launch(train)
"""


def fab011(before: str, accelerator: str = "cuda", strategy: str = "ddp_notebook"):
    src = textwrap.dedent(NOTEBOOK.format(before=before, accelerator=accelerator, strategy=strategy)).lstrip()
    return Analyzer(Workspace(), [RULES_BY_CODE["FAB011"]]).analyze(src, "/tmp/train.ipynb")


@pytest.mark.parametrize(
    "before",
    [
        "model = torch.nn.Linear(2, 2).cuda()",
        'x = torch.zeros(2, device="cuda")',
        "torch.cuda.set_device(0)",
        'model.to("cuda:0")',
    ],
)
def test_cuda_initialised_before_a_fork_based_launch_is_a_warning(before):
    [finding] = fab011(before)
    assert finding.severity.name == "WARNING" and "Cannot re-initialize CUDA in forked subprocess" in finding.message
    assert finding.related[0].message == "CUDA initialised here"


@pytest.mark.parametrize(
    ("before", "accelerator", "strategy"),
    [
        ("ok = torch.cuda.is_available()", "cuda", "ddp_notebook"),  # a device query: no context
        ("# model.cuda()", "cuda", "ddp_notebook"),  # a comment
        ("def helper(m):\n    return m.cuda()", "cuda", "ddp_notebook"),  # not run by the notebook itself
        ("model = torch.nn.Linear(2, 2).cuda()", "cpu", "ddp_notebook"),  # CPU processes
        ("model = torch.nn.Linear(2, 2).cuda()", "cuda", "dp"),  # no fork
    ],
)
def test_no_warning_without_a_cuda_context_before_a_fork_on_gpus(before, accelerator, strategy):
    assert fab011(before, accelerator, strategy) == []


def test_cuda_initialised_before_reads_only_top_level_code_before_the_node():
    module = ModuleInfo("import torch\nx = 1\nmodel.cuda()\nlaunch()\n", "/tmp/a.ipynb")
    launch = module.tree.body[-1].value
    assert cuda_initialised_before(module, launch) == 3
    assert cuda_initialised_before(module, module.tree.body[1]) is None
