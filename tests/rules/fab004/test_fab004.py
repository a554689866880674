"""FAB004 (``loss.backward()`` where Fabric requires ``fabric.backward(loss)``): how the message
and the fix write the receiver."""

from __future__ import annotations

import ast

import pytest
from fabric_lsp.engine import Analyzer
from fabric_lsp.engine.python.text import apply_edits
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import RULES_BY_CODE

CODE = """\
import torch
from lightning.fabric import Fabric

fabric = Fabric(accelerator="cpu", precision="bf16-mixed")
model = fabric.setup_module(torch.nn.Linear(4, 4))
out = model(torch.ones(4))
aux = out.mean()
{backward}
"""


@pytest.mark.parametrize(
    ("backward", "shown", "fixed"),
    [
        ("(out.sum() + aux).backward()", "`(out.sum() + aux).backward()`", "fabric.backward(out.sum() + aux)"),
        ("(-out.sum()).backward()", "`(-out.sum()).backward()`", "fabric.backward(-out.sum())"),
        ("out.sum().backward()", "`out.sum().backward()`", "fabric.backward(out.sum())"),
        ("out[0].backward(retain_graph=True)", "`out[0].backward()`", "fabric.backward(out[0], retain_graph=True)"),
    ],
)
def test_the_receiver_is_written_as_it_stands(backward: str, shown: str, fixed: str) -> None:
    text = CODE.format(backward=backward)
    (finding,) = Analyzer(Workspace(), [RULES_BY_CODE["FAB004"]]).analyze(text, "train.py")
    assert finding.message.startswith(shown + " raises RuntimeError")
    assert finding.fix is not None
    after = apply_edits(text, list(finding.fix.edits))
    assert after.splitlines()[-1] == fixed
    ast.parse(after)


STATIC = """\
import torch
import lightning as L


class Runner:
    def __init__(self, model):
        self.fabric = L.Fabric(accelerator="cpu", precision="bf16-mixed")
        self.model = self.fabric.setup(model)

    def fit(self):
        self.step(fabric=self.fabric, model=self.model)

    @staticmethod
    def step(fabric, model):
        (model(torch.ones(4)).sum() + 1).backward()


Runner(torch.nn.Linear(4, 4)).fit()
"""


def test_a_staticmethods_parameter_names_the_fabric():
    # joey00072/ohara: the Fabric reaches a staticmethod called through `self`; its call sites are
    # found (through the class or an instance), so the fix can name the parameter
    (finding,) = Analyzer(Workspace(), [RULES_BY_CODE["FAB004"]]).analyze(STATIC, "train.py")
    assert finding.fix is not None
    after = apply_edits(STATIC, list(finding.fix.edits))
    assert "        fabric.backward(model(torch.ones(4)).sum() + 1)\n" in after
    ast.parse(after)
