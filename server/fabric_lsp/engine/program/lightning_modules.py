"""LightningModules, DataModules and callbacks of analysed source: which user classes derive from
them, their hooks through the user part of the MRO, which classes the Trainer's entry points
(``trainer.fit(model)`` …) run, and ``automatic_optimization``.

Pure functions over the parsed modules and the evaluator (no pygls, no rule import). A module
that mentions no Lightning class costs one pass over its class statements.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, TypeVar

from fabric_lsp import facts
from fabric_lsp.engine.lightning.fabric_args import pytorch_base
from fabric_lsp.engine.program.infer import Inference
from fabric_lsp.engine.python.modules import FUNC_TYPES, ModuleInfo
from fabric_lsp.engine.python.values import BudgetExceeded, ClassRef, Instance

if TYPE_CHECKING:
    from fabric_lsp.engine.workspace.workspace import Workspace

#: the Lightning classes whose user subclasses this module describes
USER_BASES = (facts.LIGHTNING_MODULE_CLASS, facts.DATA_MODULE_CLASS, facts.CALLBACK_CLASS)
T = TypeVar("T")
_BRANCHES = tuple(t for t in (ast.If, ast.IfExp, ast.Try, ast.BoolOp, ast.While, getattr(ast, "Match", None)) if t is not None)


@dataclass(frozen=True)
class LightningClass:
    """A user class deriving (at any depth) from ``base`` (a canonical name of :data:`USER_BASES`)."""

    cls: ClassRef
    base: str

    @property
    def name(self) -> str:
        return self.cls.name


@dataclass(frozen=True)
class Hook:
    """A hook ``name`` of a user class: its ``def`` in ``owner`` (the first user class of the MRO
    that defines it)."""

    name: str
    node: ast.AST
    owner: ClassRef


@dataclass(frozen=True)
class EntryPoint:
    """A ``trainer.<method>(model, ...)`` call in ``module`` whose model may be an instance of the
    class asked about: ``every`` when every alternative of the model is one (of the class or a
    subclass), ``conditional`` when the call runs only on some paths of its function."""

    method: str
    call: ast.Call
    module: ModuleInfo
    every: bool
    conditional: bool


def _bounded(inference: Inference, compute: Callable[[], T], default: T) -> T:
    """``compute()`` within a fresh evaluation budget; ``default`` where it runs out."""
    inference.start()
    try:
        return compute()
    except (BudgetExceeded, RecursionError):
        return default


# -- user classes ---------------------------------------------------------------------------------
def lightning_classes(inference: Inference, module: ModuleInfo) -> list[LightningClass]:
    """The classes of ``module`` deriving from a LightningModule, DataModule or Callback."""
    out: list[LightningClass] = []
    for node in module.classes():
        if not node.bases:
            continue
        found = lightning_class(inference, ClassRef(node, module))
        if found is not None:
            out.append(found)
    return out


def lightning_class(inference: Inference, cls: ClassRef) -> LightningClass | None:
    """``cls`` with the Lightning class of :data:`USER_BASES` it derives from, or None (also where
    its bases cannot be evaluated within the evaluator's budget)."""
    base = _bounded(inference, lambda: pytorch_base(inference, cls), None)
    return LightningClass(cls, base) if base in USER_BASES else None


def hook(inference: Inference, cls: ClassRef, name: str) -> Hook | None:
    """The ``def name`` of the first user class of ``cls``'s MRO that defines it (Lightning's own
    classes are not analysed source: the MRO stops there), or None."""
    for klass in _mro(inference, cls) or ():
        for item in klass.node.body:
            if isinstance(item, FUNC_TYPES) and item.name == name:
                return Hook(name, item, klass)
    return None


def _mro(inference: Inference, cls: ClassRef) -> list[ClassRef] | None:
    """The user classes of ``cls``'s MRO, or None where its bases cannot be evaluated."""
    return _bounded(inference, lambda: inference.mro(cls), None)


def defines_attribute(inference: Inference, cls: ClassRef, name: str) -> bool:
    """Whether a user class of ``cls``'s MRO defines ``name`` in its body (a method, a property, an
    assignment); True as well where the MRO cannot be evaluated."""
    mro = _mro(inference, cls)
    if mro is None:
        return True
    for klass in mro:
        for item in klass.node.body:
            if isinstance(item, FUNC_TYPES) and item.name == name:
                return True
            targets = item.targets if isinstance(item, ast.Assign) else [item.target] if isinstance(item, ast.AnnAssign) else []
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
    return False


# -- automatic optimization -----------------------------------------------------------------------
def automatic_optimization(inference: Inference, cls: ClassRef) -> bool | None:
    """``automatic_optimization`` of instances of ``cls``: Lightning's default True unless a user
    class of the MRO sets it (a class attribute, a property, ``self.automatic_optimization = ...`` in
    a method); None where what it is set to is not a constant."""
    found: set[object] = set()
    mro = _mro(inference, cls)
    if mro is None:
        return None
    for klass in mro:
        found |= _set_automatic_optimization(klass.node)
        if found:
            break
    if not found:
        return True
    if found == {True}:
        return True
    return False if found == {False} else None


def _set_automatic_optimization(node: ast.ClassDef) -> set[object]:
    out: set[object] = set()
    for item in node.body:
        if isinstance(item, (ast.Assign, ast.AnnAssign)) and item.value is not None:
            targets = item.targets if isinstance(item, ast.Assign) else [item.target]
            if any(isinstance(t, ast.Name) and t.id == "automatic_optimization" for t in targets):
                out.add(_constant(item.value))
        elif isinstance(item, FUNC_TYPES) and item.name == "automatic_optimization":
            returns = [n.value for n in ast.walk(item) if isinstance(n, ast.Return)]
            out |= {_constant(r) if r is not None else None for r in returns} or {None}
        elif isinstance(item, FUNC_TYPES) and item.args.args:
            me = item.args.args[0].arg
            for n in ast.walk(item):
                if isinstance(n, ast.Assign) and any(_is_self_attr(t, me, "automatic_optimization") for t in n.targets):
                    out.add(_constant(n.value))
    return out


def _constant(node: ast.AST) -> object:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, bool) else None


def _is_self_attr(node: ast.AST, me: str, attr: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.value, ast.Name) and node.value.id == me


# -- entry points ---------------------------------------------------------------------------------
def entry_points(inference: Inference, workspace: Workspace | None, cls: ClassRef) -> list[EntryPoint]:
    """The ``trainer.fit/validate/test/predict(model, ...)`` calls (``model=`` too) of the
    workspace whose model may be an instance of ``cls`` or of a subclass, in this module and in
    the modules that mention one of their names."""
    hierarchy = [cls, *_bounded(inference, lambda: inference.subclasses(cls), [])]
    nodes = {_class_key(k) for k in hierarchy}
    modules = {id(cls.module): cls.module}
    if workspace is not None and cls.module.path:
        for k in hierarchy:
            for m in workspace.modules_mentioning(k.name, exclude=cls.module.path):
                modules.setdefault(id(m), m)
    out: list[EntryPoint] = []
    for m in modules.values():
        for method in facts.TRAINER_ENTRY_POINTS:
            for call in m.calls_by_name.get(method, []):
                found = _entry_point(inference, m, call, method, nodes)
                if found is not None:
                    out.append(found)
    return out


def _class_key(cls: ClassRef) -> tuple:
    """A class by where it is defined: the workspace may hold another parse of the document."""
    return (cls.module.path, cls.node.lineno, cls.node.name) if cls.module.path else (id(cls.node),)


def _entry_point(inference: Inference, m: ModuleInfo, call: ast.Call, method: str, nodes: set[tuple]) -> EntryPoint | None:
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == method):
        return None
    arg = model_argument(call)
    if arg is None:
        return None
    values = inference.evaluate(arg, m)
    ours = [v for v in values if isinstance(v, Instance) and _class_key(v.cls) in nodes]
    if not ours:
        return None
    return EntryPoint(method, call, m, len(ours) == len(values), _conditional(m, call))


def model_argument(call: ast.Call) -> ast.expr | None:
    """The LightningModule an entry-point call is given: its first argument or ``model=``."""
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == facts.ENTRY_POINT_MODEL_PARAMETER), None)


def _conditional(m: ModuleInfo, node: ast.AST) -> bool:
    """Whether ``node`` is under a branch, a loop body that may not run, or a ``try`` of its
    function (or of the module)."""
    prev, cur = node, m.parents.get(node)
    while cur is not None and not isinstance(cur, (*FUNC_TYPES, ast.Module, ast.Lambda)):
        if isinstance(cur, _BRANCHES) and not _first_part(cur, prev):
            return True
        prev, cur = cur, m.parents.get(cur)
    return False


def _first_part(branch: ast.AST, child: ast.AST) -> bool:
    if isinstance(branch, (ast.If, ast.IfExp, ast.While)):
        return child is branch.test
    if isinstance(branch, ast.Try):
        return child in branch.body or child in branch.finalbody
    if isinstance(branch, ast.BoolOp):
        return child is branch.values[0]
    return False


# -- Trainer constructions ------------------------------------------------------------------------
def trainer_init_forwards(inference: Inference, cls: ClassRef, keywords: set[str]) -> bool | None:
    """For a user subclass of the Trainer: True when the ``keywords`` its construction is given
    reach ``Trainer.__init__`` unchanged — no user class of the MRO defines ``__init__``, or the
    only one that does names none of them and passes its ``**kwargs`` to
    ``super().__init__(..., **kwargs)``; None otherwise (what a keyword does is not known)."""
    mro = _mro(inference, cls)
    if mro is None:
        return None
    inits = [h for h in (hook(inference, k, "__init__") for k in mro) if h is not None]
    owners = {id(h.node): h for h in inits}
    if not owners:
        return True
    if len(owners) > 1:
        return None
    init = next(iter(owners.values())).node
    kwarg = init.args.kwarg  # type: ignore[attr-defined]
    if kwarg is None or keywords & init_parameters(init):
        return None
    return True if _forwards_kwargs(init, kwarg.arg) else None


def init_parameters(func: ast.AST) -> set[str]:
    a = func.args  # type: ignore[attr-defined]
    return {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}


def _forwards_kwargs(init: ast.AST, name: str) -> bool:
    for n in ast.walk(init):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "__init__"):
            continue
        receiver = n.func.value
        is_super = isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and receiver.func.id == "super"
        if is_super and any(k.arg is None and isinstance(k.value, ast.Name) and k.value.id == name for k in n.keywords):
            return True
    return False
