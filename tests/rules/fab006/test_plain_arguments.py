"""FAB006's checks read a plain argument (``checkpoint_dir / "hparams.yaml"``, an f-string, a name
bound only to such expressions) from its syntax: it is no dict and no state, and nothing is
evaluated to say so. Evaluating it could cost a whole budget: the directory is a parameter, and
every call site's argument is followed (litgpt's ``parser.save(config, checkpoint_dir / ...)``
ran out of steps, 37 ms)."""

from __future__ import annotations

import ast
import textwrap

import pytest
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules.fab006.checks import dict_display, is_state

SOURCE = textwrap.dedent(
    """
    def save(saver, checkpoint_dir, name, config):
        path = checkpoint_dir / "hparams.yaml"
        state = {"model": config}
        saver.save(config, checkpoint_dir / "hparams.yaml")
        saver.save(config, f"{name}.yaml")
        saver.save(config, path)
        saver.save(config, state)
        saver.save(config, checkpoint_dir)
    """
).lstrip()


def _model_and_states():
    model = SemanticModel(ModuleInfo(SOURCE, "/project/save.py"), Workspace())
    calls = [
        n for n in ast.walk(model.module.tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "save"
    ]
    calls.sort(key=lambda c: c.lineno)
    evaluated: list[str] = []
    evaluate = model.inference.evaluate

    def counting(node, module):
        evaluated.append(ast.unparse(node))
        return evaluate(node, module)

    model.inference.evaluate = counting  # type: ignore[method-assign]
    return model, [c.args[1] for c in calls], evaluated


@pytest.mark.parametrize("i", [0, 1, 2], ids=["path / name", "f-string", "name bound to path / name"])
def test_a_plain_argument_is_no_dict_and_no_state_without_evaluating_it(i):
    model, states, evaluated = _model_and_states()
    assert model.plain(states[i])
    assert dict_display(model, states[i]) is None
    assert not is_state(model, states[i])
    assert evaluated == []


def test_a_name_bound_to_a_dict_display_is_still_evaluated_and_found():
    model, states, evaluated = _model_and_states()
    assert not model.plain(states[3])
    display = dict_display(model, states[3])
    assert isinstance(display, ast.Dict) and display.lineno == 3
    assert is_state(model, states[3])
    assert evaluated == ["state"]


def test_a_parameter_is_not_plain_and_is_evaluated():
    model, states, evaluated = _model_and_states()
    assert not model.plain(states[4])
    assert dict_display(model, states[4]) is None
    assert evaluated == ["checkpoint_dir"]
