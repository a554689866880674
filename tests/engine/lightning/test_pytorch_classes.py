"""The Trainer-side Lightning classes under every import path, and user classes deriving from them."""

from __future__ import annotations

import ast
import textwrap

import pytest
from fabric_lsp import facts
from fabric_lsp.engine.lightning.fabric_args import pytorch_class_of
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.engine.workspace.workspace import Workspace


def _class_of(src: str) -> str | None:
    model = SemanticModel(ModuleInfo(textwrap.dedent(src).lstrip(), "/tmp/t.py"), Workspace())
    last = model.module.tree.body[-1]
    assert isinstance(last, ast.Expr)
    found = {pytorch_class_of(model.inference, v) for v in model.values(last.value)}
    assert len(found) == 1, found
    return found.pop()


@pytest.mark.parametrize(
    "src, expected",
    [
        ("import lightning as L\nL.Trainer", facts.TRAINER_CLASS),
        ("from lightning.pytorch import Trainer\nTrainer", facts.TRAINER_CLASS),
        ("import pytorch_lightning as pl\npl.Trainer", facts.TRAINER_CLASS),
        ("from pytorch_lightning.trainer.trainer import Trainer\nTrainer", facts.TRAINER_CLASS),
        (
            "import lightning as L\nclass M(L.LightningModule):\n    pass\nclass N(M):\n    pass\nN",
            facts.LIGHTNING_MODULE_CLASS,
        ),
        ("from pytorch_lightning.callbacks import ModelCheckpoint\nModelCheckpoint", facts.MODEL_CHECKPOINT_CLASS),
        ("from lightning.pytorch.callbacks import Callback\nclass C(Callback):\n    pass\nC", facts.CALLBACK_CLASS),
        ("from lightning.fabric import Fabric\nFabric", None),
        ("import torch\nclass M(torch.nn.Module):\n    pass\nM", None),
    ],
)
def test_the_lightning_class_a_name_spells(src: str, expected: str | None) -> None:
    assert _class_of(src) == expected
