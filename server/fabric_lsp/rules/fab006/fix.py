"""FAB006's fix: swap ``fabric.save(state, path)`` into ``fabric.save(path, state)``, only where the
first argument is a dict display or a ``.state_dict()`` call and the second a string, an f-string
or a ``Path(...)`` — the forms whose meaning the swap provably restores."""

from __future__ import annotations

import ast

from fabric_lsp.engine.findings import Applicability, Edit, Fix
from fabric_lsp.engine.python.text import apply_edits
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.rules.fab006.checks import is_path_literal, is_state_literal


def swap_fix(model: SemanticModel, call: ast.Call) -> Fix | None:
    if len(call.args) < 2:
        return None
    state, path = call.args[0], call.args[1]
    if not (is_state_literal(state) and is_path_literal(path)):
        return None
    edits = (Edit(model.span(state), model.segment(path)), Edit(model.span(path), model.segment(state)))
    try:
        ast.parse(apply_edits(model.module.text, list(edits)))
    except SyntaxError:
        return None
    return Fix("Swap the arguments: `save(path, state)`", Applicability.SAFE, edits)
