"""The evaluator's Trainer values: every spelling, a subclass, a partial, a ``**kwargs`` dict, a
parameter known by its type, and one argument set per path."""

from __future__ import annotations

import ast
import textwrap

import pytest
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.python.values import FabricInst, TrainerInst
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.engine.workspace.workspace import Workspace


def _values(src: str) -> list:
    model = SemanticModel(ModuleInfo(textwrap.dedent(src).lstrip(), "/tmp/t.py"), Workspace())
    last = model.module.tree.body[-1]
    assert isinstance(last, ast.Expr)
    return model.values(last.value)


def _written(v: TrainerInst) -> set[str]:
    assert v.args is not None
    return {name for name, _, _ in v.args.items}


@pytest.mark.parametrize(
    "header",
    [
        "import lightning as L\nt = L.Trainer(max_epochs=1)",
        "from lightning.pytorch import Trainer\nt = Trainer(max_epochs=1)",
        "import pytorch_lightning as pl\nt = pl.Trainer(max_epochs=1)",
        "from pytorch_lightning.trainer.trainer import Trainer\nt = Trainer(max_epochs=1)",
        "import functools\nimport lightning as L\nt = functools.partial(L.Trainer, max_epochs=1)()",
        "import lightning as L\ncfg = {'max_epochs': 1}\nt = L.Trainer(**cfg)",
        "import lightning as L\nclass T(L.Trainer):\n    def __init__(self, n):\n        super().__init__(max_epochs=n)\nt = T(1)",
    ],
)
def test_a_trainer_under_every_spelling(header: str) -> None:
    (v,) = _values(header + "\nt")
    assert isinstance(v, TrainerInst)
    assert _written(v) == {"max_epochs"}


def test_a_parameter_annotated_trainer_is_known_by_its_type() -> None:
    src = "from lightning.pytorch import Trainer\ndef run(trainer: Trainer):\n    return trainer\nrun.__name__\n"
    model = SemanticModel(ModuleInfo(src, "/tmp/t.py"), Workspace())
    func = model.module.tree.body[1]
    (v,) = model.values(func.body[0].value)
    assert isinstance(v, TrainerInst) and v.args is None


def test_two_paths_give_two_trainers() -> None:
    src = """
    import argparse
    import lightning as L
    args = argparse.ArgumentParser().parse_args()
    if args.fast:
        t = L.Trainer(fast_dev_run=True)
    else:
        t = L.Trainer()
    t
    """
    values = _values(src)
    assert all(isinstance(v, TrainerInst) for v in values)
    assert sorted(len(_written(v)) for v in values) == [0, 1]


def test_a_fabric_is_not_a_trainer() -> None:
    (v,) = _values("from lightning.fabric import Fabric\nf = Fabric()\nf")
    assert isinstance(v, FabricInst)


def test_lightning_cli_trainer_stays_unknown() -> None:
    values = _values("from lightning.pytorch.cli import LightningCLI\ncli = LightningCLI()\ncli.trainer")
    assert not any(isinstance(v, TrainerInst) for v in values)


@pytest.mark.parametrize(
    "option, expected",
    [
        ('parser.add_argument("--debug", action="store_true")', [False, True]),
        ('parser.add_argument("--debug", action="store_false")', [True, False]),
        ('parser.add_argument("--debug", action="store_true", default=True)', [True]),
        ('parser.add_argument("--debug", type=int)', None),
    ],
)
def test_a_store_true_flag_has_two_values(option: str, expected: list | None) -> None:
    from fabric_lsp.engine.python.values import Const

    src = f"import argparse\nparser = argparse.ArgumentParser()\n{option}\nargs = parser.parse_args()\nargs.debug\n"
    values = _values(src)
    if expected is None:
        assert not any(isinstance(v, Const) for v in values)
    else:
        assert [v.value for v in values if isinstance(v, Const)] == expected and len(values) == len(expected)
