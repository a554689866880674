"""Which collectives a call reaches (FAB002's question for calls that are not Fabric methods).

A call *reaches* a collective when it is one — a Fabric collective (``fabric.save`` …, on a
Lightning Fabric), a ``torch.distributed`` collective (``facts.TORCH_DISTRIBUTED_COLLECTIVES``), or
an implicit collective of a set-up model (:mod:`fabric_lsp.engine.program.setups`): its forward
(``model(x)``, ``model.forward(x)``), a method that runs it (``model.generate(...)``,
:mod:`fabric_lsp.engine.program.model_methods`) or its ``state_dict()`` — or when it calls a function of
the analysed code (in its module, or in another module the evaluator resolves) whose body reaches
one, followed :data:`MAX_HELPER_DEPTH` calls deep. A call inside a helper that only some ranks
reach there (its own rank guard) is not followed: it is judged where it stands. Whether the
reached call *is* a collective for a given strategy is the rule's question (``facts``).

Pure functions over the semantic model's evaluator and set-up questions (no rule import).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fabric_lsp import facts
from fabric_lsp.engine.program.infer import is_plain
from fabric_lsp.engine.program.ranks import direct_rank_guard
from fabric_lsp.engine.program.setups import SetupCall, own_nodes
from fabric_lsp.engine.python.modules import FUNC_TYPES, ModuleInfo
from fabric_lsp.engine.python.values import FabricInst, FuncRef, QualRef, Unknown

if TYPE_CHECKING:
    from fabric_lsp.engine.semantic.model import SemanticModel

#: how many helper calls deep a call is followed to the collective it reaches
MAX_HELPER_DEPTH = 3
#: Fabric methods that are collectives (``load_raw`` under some strategies: the rule's question)
FABRIC_COLLECTIVES = facts.COLLECTIVE_METHODS


@dataclass(frozen=True)
class Step:
    """A helper call on the way to a collective: ``call`` in ``module`` runs ``function``."""

    call: ast.Call
    module: ModuleInfo
    function: str


@dataclass(frozen=True)
class Reached:
    """A call that may be a collective. ``kind``: "fabric" (a Fabric method ``name``), "torch" (a
    ``torch.distributed`` function, ``name`` its qualified name), or an implicit collective of the
    set-up models ``setups``: "forward", "method" (``name`` runs the model) or "state_dict"."""

    kind: str
    call: ast.Call
    module: ModuleInfo
    name: str
    fabrics: tuple[FabricInst, ...] = ()
    unknown: int = 0
    setups: tuple[SetupCall, ...] = ()
    via: tuple[Step, ...] = ()

    @property
    def implicit(self) -> bool:
        return self.kind in ("forward", "method", "state_dict")


def reached(model: SemanticModel, call: ast.Call, module: ModuleInfo) -> list[Reached]:
    """The collectives ``call`` (in ``module``) is or reaches through helpers."""
    return _reached(model, call, module, 0, set())


def _reached(model: SemanticModel, call: ast.Call, m: ModuleInfo, depth: int, seen: set[int]) -> list[Reached]:
    own = direct(model, call, m)
    if own is not None:
        return [own]
    if depth >= MAX_HELPER_DEPTH:
        return []
    return _through_helpers(model, call, m, depth, seen)


def direct(model: SemanticModel, call: ast.Call, m: ModuleInfo) -> Reached | None:
    """``call`` itself as a collective, or None."""
    func = call.func
    if _of_plain_value(call, m):
        return _model_use(model, call, m)
    if isinstance(func, ast.Attribute) and func.attr in FABRIC_COLLECTIVES:
        values = model.inference.evaluate(func.value, m)
        fabrics = tuple(v for v in values if isinstance(v, FabricInst))
        unknown = sum(isinstance(v, Unknown) for v in values)
        if fabrics:
            return Reached("fabric", call, m, func.attr, fabrics, unknown)
    if not isinstance(func, (ast.Name, ast.Attribute)):
        return None
    for v in model.inference.evaluate(func, m):
        if isinstance(v, QualRef) and v.qualname in facts.TORCH_DISTRIBUTED_COLLECTIVES:
            return Reached("torch", call, m, v.qualname)
    return _model_use(model, call, m)


def _of_plain_value(call: ast.Call, m: ModuleInfo) -> bool:
    """A method of a plain value (``path.exists()``, ``(root / name).is_file()``,
    ``", ".join(...)``): no Fabric's, no ``torch.distributed`` function and no function of the
    analysed code (:func:`~fabric_lsp.engine.program.infer.is_plain`), known without evaluating
    the value (``root`` may be a parameter every call site passes)."""
    return isinstance(call.func, ast.Attribute) and is_plain(call.func.value, m)


def _model_use(model: SemanticModel, call: ast.Call, m: ModuleInfo) -> Reached | None:
    """``model(x)``, ``model.forward(x)``, ``model.state_dict()`` or ``model.<method>(...)`` that
    runs the model, on a set-up model."""
    func = call.func
    setups = model.setups.models(func, m)
    if setups:
        return Reached("forward", call, m, "forward", setups=tuple(setups))
    if not isinstance(func, ast.Attribute) or not isinstance(func.value, (ast.Name, ast.Attribute)):
        return None
    setups = model.setups.models(func.value, m)
    if not setups:
        return None
    if func.attr in ("forward", "state_dict"):
        return Reached(func.attr, call, m, func.attr, setups=tuple(setups))
    if func.attr in facts.FABRIC_MODULE_ATTRIBUTES or not _runs_model(model, setups, func.attr):
        return None
    return Reached("method", call, m, func.attr, setups=tuple(setups))


def _runs_model(model: SemanticModel, setups: list[SetupCall], name: str) -> bool:
    for s in setups:
        classes, _ = model.model_classes(s)
        if any(model.method_run(c, name).runs is not None for c in classes):
            return True
    return False


def _through_helpers(model: SemanticModel, call: ast.Call, m: ModuleInfo, depth: int, seen: set[int]) -> list[Reached]:
    """The collectives the body of the function ``call`` runs reaches (the first such function)."""
    if not isinstance(call.func, (ast.Name, ast.Attribute)) or _of_plain_value(call, m):
        return []
    for callee in model.inference.evaluate(call.func, m):
        if not isinstance(callee, FuncRef) or not isinstance(callee.node, FUNC_TYPES):
            continue
        if not _may_reach_from(model, call, callee):
            continue
        if id(callee.node) in seen:
            model.inference.cuts.append(("seen", id(callee.node)))  # the walk so far decides
            continue
        seen.add(id(callee.node))
        key = ("reached in", id(callee.node), depth)
        first = not model.asked_once.answered(key)
        compute = functools.partial(_in_body_once, model, callee, depth, seen)
        inside, walked, relied = model.asked_once(
            key, compute, (callee.node, callee.module), functools.partial(_fits, seen)
        )
        model.inference.cuts.extend(("seen", i) for i in relied)  # what holds it depends on them too
        if first:
            seen.update(walked)  # an answer another analysis worked out walked these functions too
        if inside:
            step = Step(call, m, callee.node.name)
            return [dataclasses.replace(r, via=(step, *r.via)) for r in inside]
    return []


#: what an installed package's module says where its own code can reach a collective: it names
#: ``torch.distributed`` (or calls one of its collectives, re-exported) or builds a ``Fabric``
#: (a Fabric or a set-up model it did not build can only come from the caller)
_COLLECTIVE_WORDS = re.compile(
    r"\b(?:distributed|Fabric)\b|\b(?:"
    + "|".join(sorted({q.rsplit(".", 1)[-1] for q in facts.TORCH_DISTRIBUTED_COLLECTIVES}))
    + r")\s*\("
)


def _may_reach_from(model: SemanticModel, call: ast.Call, callee: FuncRef) -> bool:
    """Whether the body of ``callee`` may reach a collective from ``call``: always for the
    workspace's own code. A function of an installed package (``tqdm``'s ``update``) holds no
    Fabric and no set-up model of its own: it reaches one where its module names a collective
    (:data:`_COLLECTIVE_WORDS`), or where the call hands it something (a name, an attribute) and
    its body calls a parameter or a parameter's method (``model(x)``, ``fabric.barrier()``)."""
    root, path = model.workspace.root, callee.module.path
    if root is None or path is None or os.path.abspath(path).startswith(root + os.sep):
        return True
    if _COLLECTIVE_WORDS.search(callee.module.text) is not None:
        return True
    arguments = [*call.args, *(k.value for k in call.keywords)]
    handed = any(isinstance(a, (ast.Name, ast.Attribute, ast.Starred)) for a in arguments)
    return handed and _calls_a_parameter(callee)


def _calls_a_parameter(callee: FuncRef) -> bool:
    """Whether ``callee``'s own body calls one of its parameters or a method of one (``self``
    left out: the package's own object)."""
    func = callee.node
    args = func.args  # type: ignore[attr-defined]
    params = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    if callee.module.enclosing_class(func) is not None:
        params = params[1:]
    if args.vararg is not None:
        params.append(args.vararg.arg)
    if args.kwarg is not None:
        params.append(args.kwarg.arg)
    for node in own_nodes(func):
        if isinstance(node, ast.Call):
            f = node.func.value if isinstance(node.func, ast.Attribute) else node.func
            if isinstance(f, ast.Name) and f.id in params:
                return True
    return False


#: a helper body's collectives, the functions its walk went through, and those it skipped as seen
#: before it began
InBody = tuple[list[Reached], frozenset[int], frozenset[int]]


def _in_body_once(model: SemanticModel, callee: FuncRef, depth: int, seen: set[int]) -> InBody:
    """:func:`_in_body`, with what the answer depends on of the walk it is part of: the functions
    it added to ``seen`` and those it skipped because the walk had seen them before."""
    cuts = model.inference.cuts
    start, before = len(cuts), frozenset(seen)
    found = _in_body(model, callee, depth, seen)
    relied = frozenset(k[1] for k in cuts[start:] if len(k) == 2 and k[0] == "seen" and k[1] in before)
    return found, frozenset(seen - before), relied


def _fits(seen: set[int], answer: InBody) -> bool:
    """Whether another walk's answer is this walk's: it skipped what this walk has seen, and went
    through nothing this walk has seen."""
    _, walked, relied = answer
    return relied <= seen and seen.isdisjoint(walked)


def _in_body(model: SemanticModel, callee: FuncRef, depth: int, seen: set[int]) -> list[Reached]:
    """The collectives the calls of ``callee``'s body reach (its own rank-guarded calls left out);
    asked once per function and depth in an analysis."""
    return [
        r
        for inner in own_nodes(callee.node)
        if isinstance(inner, ast.Call) and direct_rank_guard(callee.module, inner) is None
        for r in _reached(model, inner, callee.module, depth + 1, seen)
    ]
