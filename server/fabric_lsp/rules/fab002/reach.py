"""FAB002 at a rank-guarded call that is not itself a Fabric collective: a helper whose body reaches
one, a ``torch.distributed`` collective, or an implicit collective of a set-up sharded model (its
forward, a method that runs it, its ``state_dict()``), reached on some ranks only.

Certainty: a Fabric collective or a ``torch.distributed`` one fails where several processes run;
an implicit one where, besides, the strategy shards the parameters (``facts.forward_is_collective``).
An implicit or ``torch.distributed`` collective is an error only when every configuration fails and
the process count is written (``devices="auto"`` takes the machine's device count, never certain).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable

from fabric_lsp import facts
from fabric_lsp.engine.findings import Certainty, Related
from fabric_lsp.engine.lightning.configurations import Scenario
from fabric_lsp.engine.program.ranks import RankGuard, paired, rank_guard
from fabric_lsp.engine.program.setups import origin_key
from fabric_lsp.engine.python.astwalk import walk
from fabric_lsp.engine.python.values import FabricInst
from fabric_lsp.engine.semantic.certainty import Judgement, judge_fabrics
from fabric_lsp.engine.semantic.collectives import FABRIC_COLLECTIVES, Reached, reached
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.rules.scenario_text import describe_strategies, process_related


@dataclass(frozen=True)
class Judged:
    """A reached collective and how certainly it fails on the configurations of its Fabrics."""

    reach: Reached
    fabrics: list[FabricInst]
    judgement: Judgement
    certainty: Certainty


def strongest(model: SemanticModel, call: ast.Call, guard: RankGuard) -> Judged | None:
    """The reached collective whose failure is most certain (None: none fails)."""
    best: Judged | None = None
    for reach in reached(model, call, model.module):
        judged = _judge(model, reach, guard)
        if judged is not None and (best is None or _rank(judged) > _rank(best)):
            best = judged
    return best


def _rank(j: Judged) -> int:
    return 2 if j.certainty is Certainty.CERTAIN else 1


def _judge(model: SemanticModel, reach: Reached, guard: RankGuard) -> Judged | None:
    if reach.via and _judged_where_it_stands(model, reach):
        return None
    if reach.kind == "fabric":
        fabrics, unknown = list(reach.fabrics), reach.unknown
    elif reach.kind == "torch":
        fabrics, unknown = _fabrics_of_guard(model, guard), 0
    else:
        fabrics = list({origin_key(f): f for s in reach.setups for f in s.fabrics}.values())
        unknown = sum(s.unknown for s in reach.setups)
    if not fabrics:
        return None
    judgement = judge_fabrics(model, fabrics, unknown, _fails(reach))
    certainty = judgement.failure
    machine = reach.implicit or reach.kind == "torch"  # the rule's certainty for collectives Fabric does not make
    if certainty is Certainty.CERTAIN and machine and any(_machine_sized(s) for s in judgement.failing):
        certainty = Certainty.POSSIBLE
    return Judged(reach, fabrics, judgement, certainty) if certainty is not None else None


def _judged_where_it_stands(model: SemanticModel, reach: Reached) -> bool:
    """A collective named like a Fabric one (``fabric.save``, ``dist.barrier``) inside a helper is a
    site of its own: when its function is only called on some ranks it is reported there."""
    func = reach.call.func
    named = isinstance(func, ast.Attribute) and func.attr in FABRIC_COLLECTIVES
    return named and rank_guard(reach.module, reach.call, model.workspace) is not None


def paired_at(model: SemanticModel, call: ast.Call, guard: RankGuard) -> bool:
    """The other ranks call the same collective under the opposite test (``ranks.paired``)."""
    if not isinstance(call.func, ast.Attribute):
        return False
    methods = facts.BARRIER_ENDING if call.func.attr in facts.BARRIER_ENDING else (call.func.attr,)
    return paired(model.module, call, guard, methods)


def _fails(reach: Reached) -> Callable[[Scenario], bool | None]:
    def fails(s: Scenario) -> bool | None:
        o = s.outcome
        assert o is not None
        if o.world_size <= 1:
            return False
        if reach.kind == "fabric" and reach.name == "load_raw":
            return o.kind in facts.LOAD_RAW_COLLECTIVE_KINDS
        if not reach.implicit:
            return True
        strategy = s.args.strategy if s.args is not None else None
        if reach.kind == "state_dict":
            return facts.state_dict_is_collective(o.strategy_base, strategy)
        return facts.forward_is_collective(o.strategy_base, strategy)

    return fails


def _machine_sized(s: Scenario) -> bool:
    """The process count is the machine's device count (``devices="auto"``, ``-1``)."""
    devices = s.args.devices if s.args is not None else None
    return isinstance(devices, (str, int)) and devices in facts.DEVICES_FROM_MACHINE


def _fabrics_of_guard(model: SemanticModel, guard: RankGuard) -> list[FabricInst]:
    """The Fabric whose rank the guard tests (``fabric.global_rank``), else the document's."""
    for node in walk(guard.node):
        if isinstance(node, ast.Attribute) and node.attr in (*facts.RANK_ATTRIBUTES, *facts.RANK_ZERO_FLAGS):
            found = [v for v in model.inference.evaluate(node.value, guard.module) if isinstance(v, FabricInst)]
            if found:
                return found
    out: list[FabricInst] = []
    for construction in model.fabric_constructions():
        out += [v for v in model.values(construction) if isinstance(v, FabricInst)]
    return out


# -- the message ---------------------------------------------------------------------------------
def what(model: SemanticModel, judged: Judged) -> str:
    """```save_checkpoint(...)` reaches `fabric.save(...)` (in `save_checkpoint`), a collective …``"""
    reach = judged.reach
    text = _short(reach.module.segment(reach.call))
    if reach.kind == "fabric" and isinstance(reach.call.func, ast.Attribute):
        text = f"{_short(reach.module.segment(reach.call.func.value))}.{reach.name}(...)"
    strategies = describe_strategies(judged.judgement.failing) + _sharding(judged)
    if reach.kind == "fabric":
        kind = f"a collective every process must call{' (it ends in `barrier()`)' if reach.name in ('save', 'load') else ''}"
    elif reach.kind == "torch":
        kind = "a `torch.distributed` collective every process must call"
    elif reach.kind == "state_dict":
        kind = f"the full state dict of a model sharded by {strategies}, which gathers every rank's shard"
    elif reach.kind == "method":
        kind = f"runs a model sharded by {strategies}, whose parameters each forward gathers from every rank"
    else:
        kind = f"the forward of a model sharded by {strategies}, whose parameters each forward gathers from every rank"
    if not reach.via:
        return f"`{text}` is {kind}" if reach.kind != "method" else f"`{text}` {kind}"
    chain = " → ".join(f"`{s.function}`" for s in reach.via)
    verb = "" if reach.kind == "method" else "is "
    return f"`{_short(model.segment(reach.via[0].call))}` reaches `{text}` (through {chain}), which {verb}{kind}"


def _sharding(judged: Judged) -> str:
    """`` with sharding_strategy="FULL_SHARD"`` (the first failing configuration's), for implicit ones."""
    if not judged.reach.implicit:
        return ""
    for s in judged.judgement.failing:
        if s.outcome is not None and s.args is not None:
            label = facts.sharding_label(s.outcome.strategy_base, s.args.strategy)
            return f" with {label}" if label else ""
    return ""


def consequence(judged: Judged) -> str:
    if judged.reach.implicit:
        return "rank 0 waits in the gather for ranks that never join it, until the process-group timeout"
    return (
        "the other ranks hang until the process-group timeout (30 minutes by default) or crash at their next collective"
    )


def related(model: SemanticModel, judged: Judged) -> list[Related]:
    here = model.path
    out: list[Related] = []
    reach = judged.reach
    for step in reach.via[1:]:
        out.append(
            Related(f"`{step.function}` called here", step.module.span(step.call), _path(step.module.path, here))
        )
    if reach.via:
        out.append(
            Related("The collective, inside the helper", reach.module.span(reach.call), _path(reach.module.path, here))
        )
    for s in reach.setups:
        out.append(Related("Model set up here", s.module.span(s.call), _path(s.module.path, here)))
    out += process_related(model, judged.judgement.failing, judged.fabrics)
    return list(dict.fromkeys(out))


def _path(path: str | None, here: str | None) -> str | None:
    return None if path == here else path


def _short(text: str, limit: int = 50) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
