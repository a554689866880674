"""How many processes the Trainers that run a site start: the one place PL001 decides it.

Until the Trainer's configurations are known by the evaluator, a ``Trainer(...)`` construction is
read from its literal ``accelerator``, ``devices`` and ``num_nodes``: several processes are certain
for ``num_nodes >= 2`` or an integer ``devices >= 2`` (a list of several devices too) with an
explicit accelerator; one process for ``devices=1`` (and one node); anything else written
literally (``"auto"``, the defaults) depends on the machine: possible. A value that is not a
literal, or a Trainer that is not visible, is not known: nothing (as FAB002 does for a Fabric).
"""

from __future__ import annotations

import ast

from fabric_lsp.engine.findings import Certainty


def _literal(call: ast.Call, name: str) -> tuple[bool, object]:
    """(known, value) of keyword ``name`` (absent: known, None)."""
    for kw in call.keywords:
        if kw.arg == name:
            if isinstance(kw.value, ast.Constant):
                return True, kw.value.value
            if isinstance(kw.value, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) for e in kw.value.elts):
                return True, len(kw.value.elts)
            return False, None
        if kw.arg is None:
            return False, None  # **kwargs
    return True, None


def trainer_processes(call: ast.Call) -> Certainty | None:
    """CERTAIN: several processes on every machine; POSSIBLE: on some machines; None: one process
    or not known."""
    known_nodes, nodes = _literal(call, "num_nodes")
    known_devices, devices = _literal(call, "devices")
    known_accel, accel = _literal(call, "accelerator")
    if isinstance(nodes, int) and not isinstance(nodes, bool) and nodes >= 2:
        return Certainty.CERTAIN
    if not (known_nodes and known_devices and known_accel) or call.args:
        return None
    if isinstance(devices, int) and not isinstance(devices, bool):
        if devices == 1 or devices == 0:
            return None
        if devices >= 2 and accel not in (None, "auto"):
            return Certainty.CERTAIN
        return Certainty.POSSIBLE if devices >= 2 or devices == -1 else None
    return Certainty.POSSIBLE if devices in (None, "auto", "-1") else None


def combined(certainties: list[Certainty | None]) -> Certainty | None:
    """Every Trainer several processes: CERTAIN; some (or some possibly): POSSIBLE; none: None.
    An unknown Trainer among certain ones makes the whole possible."""
    if not certainties or all(c is None for c in certainties):
        return None
    if all(c is Certainty.CERTAIN for c in certainties):
        return Certainty.CERTAIN
    return Certainty.POSSIBLE
