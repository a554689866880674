"""A parsed argparse namespace read as a mapping (``vars(args)["key"]``, ``.get``) and written
after parsing: an option assigned is not known; an update whose keys are not known adds an
unknown alternative beside the option's own."""

from __future__ import annotations

import ast
import textwrap

import pytest
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.python.values import Const, Unknown
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.engine.workspace.workspace import Workspace

_PARSER = """
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--acc", choices=["cpu", "gpu"])
parser.add_argument("--ckpt", default="best")
"""


def _last(src: str) -> list:
    model = SemanticModel(ModuleInfo(textwrap.dedent(_PARSER + src).lstrip(), "/tmp/t.py"), Workspace())
    last = model.module.tree.body[-1]
    assert isinstance(last, ast.Expr)
    return model.values(last.value)


def _described(values: list) -> list:
    return [v.value if isinstance(v, Const) else "?" for v in values]


@pytest.mark.parametrize(
    "read",
    [
        "args = parser.parse_args()\nargs.acc",
        "args = vars(parser.parse_args())\nargs['acc']",
        "args = vars(parser.parse_args())\nargs.get('acc')",
        "args = parser.parse_args()\nd = vars(args)\nd['acc']",
    ],
)
def test_an_option_read_as_attribute_or_key_has_its_choices(read: str) -> None:
    assert _described(_last(read)) == ["cpu", "gpu"]


def test_a_free_option_read_by_key_has_its_default_and_what_a_user_types() -> None:
    assert _described(_last("args = vars(parser.parse_args())\nargs['ckpt']")) == ["best", "?"]


@pytest.mark.parametrize(
    "write",
    [
        "args.acc = 'tpu'",
        "setattr(args, 'acc', 'tpu')",
        "vars(args)['acc'] = 'tpu'",
        "vars(args).update(acc='tpu')",
        "args.__dict__.update({'acc': 'tpu'})",
    ],
)
def test_an_option_assigned_after_parsing_is_not_known(write: str) -> None:
    (value,) = _last(f"args = parser.parse_args()\n{write}\nargs.acc")
    assert isinstance(value, Unknown) and "assigned after the command line is parsed" in value.reason


def test_an_assignment_of_another_option_changes_nothing() -> None:
    assert _described(_last("args = parser.parse_args()\nargs.ckpt = 'last'\nargs.acc")) == ["cpu", "gpu"]


@pytest.mark.parametrize(
    "update",
    [
        "args = vars(parser.parse_args())\nargs.update(yaml.safe_load(open('c.yaml')))\nargs['acc']",
        "args = parser.parse_args()\nfor k, v in config.items():\n    setattr(args, k, v)\nargs.acc",
        "args = parser.parse_args()\nargs.__dict__.update(config)\nargs.acc",
    ],
)
def test_an_update_with_keys_not_known_adds_an_unknown_to_every_option(update: str) -> None:
    values = _last(update)
    assert _described(values) == ["cpu", "gpu", "?"]
    assert "may be updated by" in values[-1].reason


def test_a_write_to_a_dict_that_is_not_the_namespace_changes_nothing() -> None:
    src = "args = parser.parse_args()\nother = {}\nother.update(config)\nother['acc'] = 1\nargs.acc"
    assert _described(_last(src)) == ["cpu", "gpu"]
