"""LightningModules, DataModules and callbacks of analysed source, for the Trainer rules:

- which user classes derive from them (``pytorch_base``: any import path, at any depth, across
  modules) and their hooks through the user part of the MRO (Lightning's classes are not read);
- the ``self.log``/``self.log_dict`` keys each LightningModule hook reaches (directly or through
  methods of ``self``), with the hook they run under, ``on_step``/``on_epoch`` after Lightning's
  defaults for it (``facts.LOG_DEFAULTS``), the ``callback_metrics`` names they make, and whether
  the set is complete;
- ``automatic_optimization``; the forms ``configure_optimizers`` returns (optimizers, schedulers,
  each scheduler's ``monitor`` and whether it is a ``ReduceLROnPlateau``);
- the ``trainer.fit/validate/test/predict(model)`` calls that run a class, and the classes a call
  runs; ``ModelCheckpoint``/``EarlyStopping`` arguments; whether a Trainer subclass hands its
  keywords on to ``Trainer.__init__``.

Pure functions over the parsed modules and the evaluator (no pygls, no rule import); every
evaluation runs under a fresh budget and answers "not known" where it runs out.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from typing import Callable, TypeVar

from fabric_lsp import facts
from fabric_lsp.engine.lightning import lightning_cli
from fabric_lsp.engine.lightning.fabric_args import pytorch_base, pytorch_class_of
from fabric_lsp.engine.program.infer import Inference
from fabric_lsp.engine.program.setups import own_nodes
from fabric_lsp.engine.python.astwalk import walk
from fabric_lsp.engine.python.bindings import block_bindings
from fabric_lsp.engine.python.modules import FUNC_TYPES, ModuleInfo, method_receiver
from fabric_lsp.engine.python.values import (
    ClassRef,
    Const,
    Ctx,
    Instance,
    LightningCLIInst,
    QualRef,
    TrainerInst,
    Unknown,
    Value,
)
from fabric_lsp.engine.workspace.dependencies import NOTEBOOKS
from fabric_lsp.engine.workspace.files import MAX_FILES, notebook_files
from fabric_lsp.engine.workspace.workspace import Workspace

#: the Lightning classes whose user subclasses this module describes
USER_BASES = (facts.LIGHTNING_MODULE_CLASS, facts.DATA_MODULE_CLASS, facts.CALLBACK_CLASS)
T = TypeVar("T")
_BRANCHES = tuple(
    t for t in (ast.If, ast.IfExp, ast.Try, ast.BoolOp, ast.While, getattr(ast, "Match", None)) if t is not None
)


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
    subclass), ``conditional`` when the call runs only on some paths of its function. A
    ``LightningCLI(Model, ...)`` construction is one per subcommand it may run (``cli`` set):
    conditional unless the code writes the subcommand."""

    method: str
    call: ast.Call
    module: ModuleInfo
    every: bool
    conditional: bool
    cli: bool = False


def _bounded(inference: Inference, compute: Callable[[], T], default: T) -> T:
    """``compute()`` within a fresh evaluation budget; ``default`` where it runs out."""
    return inference.bounded(compute, default)


# -- user classes ---------------------------------------------------------------------------------
def lightning_class(inference: Inference, cls: ClassRef) -> LightningClass | None:
    """``cls`` with the Lightning class of :data:`USER_BASES` it derives from, or None."""
    base = lightning_base(inference, cls)
    return LightningClass(cls, base) if base is not None else None


def lightning_base(inference: Inference, cls: ClassRef) -> str | None:
    """The Lightning class of :data:`USER_BASES` ``cls`` derives from, or None (also where its
    bases cannot be evaluated within the evaluator's budget)."""
    base = _bounded(inference, lambda: pytorch_base(inference, cls), None)
    return base if base in USER_BASES else None


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
            targets = (
                item.targets
                if isinstance(item, ast.Assign)
                else [item.target]
                if isinstance(item, ast.AnnAssign)
                else []
            )
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
    return False


# -- automatic optimization -----------------------------------------------------------------------
def automatic_optimization(inference: Inference, cls: ClassRef) -> bool | None:
    """``automatic_optimization`` of instances of ``cls``: Lightning's default True unless a user
    class of the MRO sets it (a class attribute, a property, ``self.automatic_optimization = ...`` in
    a method); None where what it is set to is not a constant, or where it is set on some paths only
    (not a statement of ``__init__``'s own body: under a condition, or in another method)."""
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
            returns = [n.value for n in walk(item) if isinstance(n, ast.Return)]
            out |= {_constant(r) if r is not None else None for r in returns} or {None}
        elif isinstance(item, FUNC_TYPES) and item.args.args:
            me = item.args.args[0].arg
            for n in walk(item):
                if isinstance(n, ast.Assign) and any(_is_self_attr(t, me, "automatic_optimization") for t in n.targets):
                    out.add(_constant(n.value))
                    if not (item.name == "__init__" and n in item.body):
                        out.add(
                            True
                        )  # set on some paths only (under a condition, or in another hook): the default stays possible
    return out


def _constant(node: ast.AST) -> object:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, bool) else None


def _is_self_attr(node: ast.AST, me: str, attr: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == attr
        and isinstance(node.value, ast.Name)
        and node.value.id == me
    )


# -- entry points ---------------------------------------------------------------------------------
def entry_points(inference: Inference, workspace: Workspace | None, cls: ClassRef) -> list[EntryPoint]:
    """The ``trainer.fit/validate/test/predict(model, ...)`` calls (``model=`` too) of the
    workspace whose model may be an instance of ``cls`` or of a subclass, in this module and in
    the modules that mention one of their names; and the subcommands of the ``LightningCLI(...)``
    constructions that may run it (given the class, a subclass, or a base in subclass mode)."""
    none: list[ClassRef] = []
    hierarchy = [cls, *_bounded(inference, lambda: inference.subclasses(cls), none)]
    supers = [k for k in (_mro(inference, cls) or [cls]) if _class_key(k) != _class_key(cls)]
    nodes = {_class_key(k) for k in hierarchy}
    modules = _modules_mentioning(workspace, cls, hierarchy)
    out: list[EntryPoint] = []
    for m in modules:
        for method in facts.TRAINER_ENTRY_POINTS:
            for call in m.calls_by_name.get(method, []):
                found = _entry_point(inference, m, call, method, nodes)
                if found is not None:
                    out.append(found)
    names = {k.name for k in (*hierarchy, *supers)}
    for m in _modules_mentioning(workspace, cls, [*hierarchy, *supers]):
        out += _cli_entry_points(inference, m, names, nodes, {_class_key(k) for k in supers})
    return out


def _modules_mentioning(workspace: Workspace | None, cls: ClassRef, classes: list[ClassRef]) -> list[ModuleInfo]:
    modules = {id(cls.module): cls.module}
    if workspace is not None and cls.module.path:
        for k in classes:
            for m in workspace.modules_mentioning(k.name, exclude=cls.module.path):
                modules.setdefault(id(m), m)
    return list(modules.values())


def _cli_entry_points(
    inference: Inference, m: ModuleInfo, names: set[str], nodes: set[tuple], supers: set[tuple]
) -> list[EntryPoint]:
    """The subcommands of the ``LightningCLI(...)`` calls of ``m`` given one of the classes
    ``names`` as their model class, that may run a class of ``nodes``."""
    out: list[EntryPoint] = []
    seen: set[int] = set()
    for name in sorted(names):
        for call in _calls_given(m, name):
            if id(call) in seen:
                continue
            seen.add(id(call))
            if not _is_cli(inference, call, m):
                continue
            for cli in inference.evaluate(call, m):
                if not isinstance(cli, LightningCLIInst):
                    continue
                may, every = lightning_cli.runs(cli, nodes, _class_key, supers)
                if may:
                    conditional = not cli.written or _conditional(m, call)
                    out += [EntryPoint(s, call, m, every, conditional, cli=True) for s in cli.subcommands]
    return out


def _is_cli(inference: Inference, call: ast.Call, m: ModuleInfo) -> bool:
    """Whether ``call`` calls ``LightningCLI`` or a project subclass of it (evaluated on its own
    before the call is)."""
    return any(pytorch_class_of(inference, v) == facts.LIGHTNING_CLI_CLASS for v in inference.evaluate(call.func, m))


def _calls_given(m: ModuleInfo, name: str) -> list[ast.Call]:
    """The calls of ``m`` whose first argument (or ``model_class=``) reads ``name``."""
    out = []
    for load in m.name_loads.get(name, []):
        parent = m.parent_of(load)
        if isinstance(parent, ast.Attribute):
            load, parent = parent, m.parent_of(parent)
        if isinstance(parent, ast.keyword) and parent.arg == "model_class":
            parent = m.parent_of(parent)
        elif not (isinstance(parent, ast.Call) and parent.args and parent.args[0] is load):
            continue
        if isinstance(parent, ast.Call):
            out.append(parent)
    return out


def _class_key(cls: ClassRef) -> tuple:
    """A class by where it is defined: the workspace may hold another parse of the document."""
    return (cls.module.path, cls.node.lineno, cls.node.name) if cls.module.path else (id(cls.node),)


def _entry_point(
    inference: Inference, m: ModuleInfo, call: ast.Call, method: str, nodes: set[tuple]
) -> EntryPoint | None:
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


# -- import styles --------------------------------------------------------------------------------
#: The Trainer side's two import styles: the standalone ``pytorch_lightning`` and the unified
#: ``lightning`` (``lightning.pytorch``, ``lightning.LightningModule``). They are two copies of the
#: classes: a Trainer of one refuses a LightningModule of the other before it checks anything else
#: (``TypeError: You passed a `pytorch_lightning` object ... to a `lightning.pytorch` Trainer``,
#: ``utilities/model_helpers.py:96``, from ``_maybe_unwrap_optimized``, ``utilities/compile.py:110``).
IMPORT_STYLES = ("pytorch_lightning", "lightning")


def import_style(qualname: str) -> str | None:
    """``pytorch_lightning`` or ``lightning``: the package a Lightning qualified name is spelled in."""
    top = qualname.split(".", 1)[0]
    return top if top in IMPORT_STYLES else None


def class_import_style(inference: Inference, cls: ClassRef, canonical: str) -> str | None:
    """The import style of the Lightning class ``canonical`` (``facts.LIGHTNING_MODULE_CLASS``,
    ``facts.TRAINER_CLASS`` …) the user class ``cls`` derives from: its first base through the
    user part of the MRO that spells it; None where no base does or they cannot be evaluated."""
    for klass in _mro(inference, cls) or ():
        for base in klass.node.bases:
            for v in inference.evaluate(base, klass.module):  # under a budget of its own
                if isinstance(v, QualRef) and facts.pytorch_class(v.qualname) == canonical:
                    return import_style(v.qualname)
    return None


def trainer_import_styles(inference: Inference, workspace: Workspace | None, m: ModuleInfo) -> frozenset[str] | None:
    """The import styles of the Trainers that the workspace's entry-point calls
    (``trainer.fit/validate/test/predict(...)``) are made on, each followed to its ``Trainer(...)``
    call; None where one is not known (a Trainer from a config, a parameter known only by its
    type, a receiver the evaluator cannot follow, a ``LightningCLI``, which builds its own).
    Receivers that are visibly no Trainer (an instance of a project class that is not one, a
    constant) are not counted: ``model.fit(x)`` of another library is not an entry point."""
    modules = {id(m): m}
    if workspace is not None:
        if workspace.modules_mentioning("LightningCLI", exclude=m.path):
            return None
        for method in facts.TRAINER_ENTRY_POINTS:
            for other in workspace.modules_mentioning(method, exclude=m.path):
                modules.setdefault(id(other), other)
    if "LightningCLI" in m.text:
        return None
    styles: set[str] = set()
    for mod in modules.values():
        for method in facts.TRAINER_ENTRY_POINTS:
            for call in mod.calls_by_name.get(method, []):
                if not (isinstance(call.func, ast.Attribute) and call.func.attr == method):
                    continue
                values = inference.evaluate(call.func.value, mod)  # under a budget of its own
                if not values:
                    return None
                for v in values:
                    if isinstance(v, TrainerInst):
                        style = _trainer_inst_style(inference, workspace, v, mod)
                        if style is None:
                            return None
                        styles.add(style)
                    elif isinstance(v, Const) or (isinstance(v, Instance) and _no_lightning_base(inference, v)):
                        continue  # visibly not a Trainer
                    else:
                        return None
    return frozenset(styles)


def _no_lightning_base(inference: Inference, inst: Instance) -> bool:
    """Whether the class of ``inst`` derives from none of Lightning's Trainer-side classes
    (False where that cannot be told within a budget)."""
    not_known: str | None = "?"
    return _bounded(inference, functools.partial(pytorch_base, inference, inst.cls), not_known) is None


def _trainer_inst_style(
    inference: Inference, workspace: Workspace | None, trainer: TrainerInst, m: ModuleInfo
) -> str | None:
    """The import style of the ``Trainer(...)`` call a Trainer comes from (None: not known)."""
    origin = trainer.origin
    if origin is None:
        return None
    mod = m
    if origin.path and origin.path != m.path:
        loaded = workspace.load_path(origin.path) if workspace is not None else None
        if loaded is None:
            return None
        mod = loaded
    if mod.tree is None:
        return None
    call = next((n for n in ast.walk(mod.tree) if isinstance(n, ast.Call) and mod.span(n) == origin.span), None)
    if call is None:
        return None
    styles = set()
    for v in inference.evaluate(call.func, mod):  # under a budget of its own
        if isinstance(v, QualRef) and facts.is_trainer_class(v.qualname):
            styles.add(import_style(v.qualname))
        elif isinstance(v, ClassRef):
            styles.add(class_import_style(inference, v, facts.TRAINER_CLASS))
        else:
            return None
    return styles.pop() if len(styles) == 1 and None not in styles else None


def entry_point_classes(inference: Inference, call: ast.Call, m: ModuleInfo) -> tuple[list[LightningClass], bool]:
    """The LightningModule classes ``trainer.fit/validate/test/predict(model, ...)`` may run (the
    evaluator's instances of them: through assignments, factories, other modules), and whether
    some alternative is not known (or no model is given: ``validate()`` without one runs the
    fitted model)."""
    arg = model_argument(call)
    if arg is None:
        return [], True
    values = inference.evaluate(arg, m)
    found: dict[int, LightningClass] = {}
    unknown = not values
    for v in values:
        lc = lightning_class(inference, v.cls) if isinstance(v, Instance) else None
        if lc is not None and lc.base == facts.LIGHTNING_MODULE_CLASS:
            found.setdefault(id(lc.cls.node), lc)
        else:
            unknown = True
    return list(found.values()), unknown


def model_argument(call: ast.Call) -> ast.expr | None:
    """The LightningModule an entry-point call is given: its first argument or ``model=``."""
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == facts.ENTRY_POINT_MODEL_PARAMETER), None)


# -- what the workspace runs -----------------------------------------------------------------------
#: The calls besides the Trainer's entry points that run a LightningModule's loops: the tuner's
#: (``Tuner(trainer).lr_find(model)``, ``.scale_batch_size(model)``; 1.x ``trainer.tune(model)``).
TUNER_METHODS = ("lr_find", "scale_batch_size", "tune")


@dataclass(frozen=True)
class RunModel:
    """A LightningModule class that an entry point of the workspace (``call`` in ``module``) may
    run: an instance of ``cls`` built there (a construction the evaluator follows), or, where the
    model is known only by its type (``system: BaseSystem = registry[name](...)``, a parameter
    ``system: BaseSystem``, ``self`` in a method), an instance of ``cls`` or of any subclass of it
    (``declared``)."""

    cls: ClassRef
    declared: bool
    call: ast.Call
    module: ModuleInfo


def workspace_runs(inference: Inference, workspace: Workspace | None, m: ModuleInfo) -> list[RunModel] | None:
    """The LightningModule classes that the entry points of the workspace (``trainer.fit/validate/
    test/predict(model)`` and the tuner's ``lr_find``/``scale_batch_size``/``tune`` in ``m`` and in
    every module that names one of them) may run; None where that is not known: a call that may be
    a Trainer's whose model is neither followed to instances of project classes nor declared with
    a project LightningModule's type (a model from a config, ``**kwargs``, a parameter declared
    with Lightning's own ``LightningModule``), a ``LightningCLI`` (it builds the model its command
    line names), a workspace with more files than are listed. Calls on receivers visibly not a
    Trainer (a constant, a module, an instance of a project class that is no Trainer) are not
    entry points; a call that passes no model runs the one its Trainer fitted."""
    modules = {id(m): m}
    if workspace is not None:
        if workspace.root and (len(workspace.python_files()) >= MAX_FILES or _notebook_runs(workspace, workspace.root)):
            return None
        if workspace.modules_mentioning("LightningCLI", exclude=m.path):
            return None
        for method in (*facts.TRAINER_ENTRY_POINTS, *TUNER_METHODS):
            for other in workspace.modules_mentioning(method, exclude=m.path):
                modules.setdefault(id(other), other)
    if "LightningCLI" in m.text:
        return None
    out: list[RunModel] = []
    for mod in modules.values():
        for method in (*facts.TRAINER_ENTRY_POINTS, *TUNER_METHODS):
            for call in mod.calls_by_name.get(method, []):
                if not (isinstance(call.func, ast.Attribute) and call.func.attr == method):
                    continue
                receivers = [
                    v for v in inference.evaluate(call.func.value, mod) or [Unknown()] if _may_be_trainer(inference, v)
                ]
                if not receivers:
                    continue
                if any(isinstance(v, (QualRef, ClassRef)) for v in receivers):
                    return None  # `Trainer.fit(trainer, model)`: the model is not the first argument
                runs = _models_run(inference, call, mod)
                if runs is None:
                    return None
                out += runs
    return out


#: notebooks larger than this (in characters, outputs included) are not read: they may run anything
MAX_NOTEBOOK_CHARS = 64 * 1024 * 1024
#: an entry-point call as a notebook's JSON holds it
_NOTEBOOK_ENTRY_POINT = re.compile(r"\.(?:" + "|".join((*facts.TRAINER_ENTRY_POINTS, *TUNER_METHODS)) + r")\s*\(")


def _notebook_runs(workspace: Workspace, root: str) -> bool:
    """Whether a notebook of the workspace may call an entry point (the workspace's modules are
    its ``.py`` files: a notebook's calls are not among them)."""
    workspace.record_listing(NOTEBOOKS)
    for path in notebook_files(root, MAX_FILES):
        text = workspace.text_of(path)  # None for a notebook larger than a module may be (its outputs): read whole
        if text is None:
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read(MAX_NOTEBOOK_CHARS + 1)
            except OSError:
                return True
            if len(text) > MAX_NOTEBOOK_CHARS:
                return True
        if _NOTEBOOK_ENTRY_POINT.search(text):
            return True
    return False


def own_instance_not_trainer(inference: Inference, m: ModuleInfo, expr: ast.AST) -> bool:
    """Whether ``expr`` is ``self`` (the instance parameter, never rebound) in a method of a class
    that derives from no Trainer: ``self.test(model)`` there calls the class's own method. Told
    from the class's bases (:func:`_may_be_trainer`), without evaluating ``self`` (which searches
    the workspace for the class's subclasses and constructions)."""
    if not isinstance(expr, ast.Name):
        return False
    func = m.scope_of(expr)
    cls = m.enclosing_class(func) if isinstance(func, FUNC_TYPES) else None
    if cls is None or method_receiver(func) != (expr.id, False) or block_bindings(func.body, expr.id)[0]:  # type: ignore[attr-defined]
        return False
    return not _may_be_trainer(inference, ClassRef(cls, m))


def _may_be_trainer(inference: Inference, v: Value) -> bool:
    """Whether a receiver may be a Trainer (or a Tuner): not a constant, a module, a function, an
    instance of a project class that derives from no Trainer …"""
    if isinstance(v, (Unknown, TrainerInst)):
        return True
    if isinstance(v, QualRef):
        return import_style(v.qualname) is not None
    if isinstance(v, (Instance, ClassRef)):
        cls = v.cls if isinstance(v, Instance) else v
        not_known: str | None = facts.TRAINER_CLASS
        return _bounded(inference, functools.partial(pytorch_base, inference, cls), not_known) == facts.TRAINER_CLASS
    return False


def _models_run(inference: Inference, call: ast.Call, m: ModuleInfo) -> list[RunModel] | None:
    """The LightningModule classes an entry-point call may run (None: not known)."""
    arg = model_argument(call)
    if arg is None:
        unpacked = any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
        return None if unpacked else []
    out: list[RunModel] = []
    unknown = False
    for v in inference.evaluate(arg, m):
        if isinstance(v, Instance):
            lc = lightning_class(inference, v.cls)
            if lc is not None and lc.base == facts.LIGHTNING_MODULE_CLASS:
                # no construction: known by its type only (a parameter's annotation, ``self``)
                out.append(RunModel(v.cls, v.call is None, call, m))
        elif isinstance(v, Unknown):
            unknown = True
    if unknown:
        declared = declared_type(inference, arg, m)
        if declared is None:
            return None
        out += [RunModel(k, True, call, m) for k in declared]
    return out


def declared_type(inference: Inference, node: ast.expr, m: ModuleInfo) -> list[ClassRef] | None:
    """The project LightningModule classes the name ``node`` is declared with in its scope (a
    parameter's annotation, ``name: Type = ...``; a type checker holds every value of the name to
    it), or None: not a name, no declaration, one that names no project LightningModule only
    (Lightning's own class, a union, a string)."""
    if not isinstance(node, ast.Name):
        return None
    scope = m.parent_of(node)
    while scope is not None and not isinstance(scope, (*FUNC_TYPES, ast.Module, ast.ClassDef, ast.Lambda)):
        scope = m.parent_of(scope)
    if scope is None:
        return None
    annotation: ast.expr | None = None
    if isinstance(scope, FUNC_TYPES):
        a = scope.args
        params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(p for p in (a.vararg, a.kwarg) if p is not None)]
        annotation = next((p.annotation for p in params if p.arg == node.id), None)
    for n in own_nodes(scope):
        if isinstance(n, (ast.Global, ast.Nonlocal)) and node.id in n.names:
            return None
        if (
            annotation is None
            and isinstance(n, ast.AnnAssign)
            and isinstance(n.target, ast.Name)
            and n.target.id == node.id
        ):
            annotation = n.annotation
    if annotation is None or isinstance(annotation, ast.Constant):
        return None
    values = inference.evaluate(annotation, m)  # under a budget of its own
    classes = [v for v in values if isinstance(v, ClassRef)]
    if not classes or len(classes) != len(values):
        return None
    if any(lightning_base(inference, k) != facts.LIGHTNING_MODULE_CLASS for k in classes):
        return None
    return classes


def may_run(inference: Inference, run: RunModel, cls: ClassRef) -> bool:
    """Whether an instance ``run`` stands for may be an instance of ``cls``: ``cls`` is in its
    class's MRO, or (the type only declared, or the instance a subclass's) that class is in the MRO
    of ``cls`` or of a subclass of it; True where an MRO cannot be evaluated."""
    key = _class_key(cls)
    run_mro = _mro(inference, run.cls)
    if run_mro is None or any(_class_key(k) == key for k in run_mro):
        return True
    none: list[ClassRef] = []
    for k in [cls, *_bounded(inference, lambda: inference.subclasses(cls), none)]:
        mro = _mro(inference, k)
        if mro is None or any(_class_key(c) == _class_key(run.cls) for c in mro):
            return True
    return False


def _conditional(m: ModuleInfo, node: ast.AST) -> bool:
    """Whether ``node`` is under a branch, a loop body that may not run, or a ``try`` of its
    function (or of the module)."""
    prev, cur = node, m.parent_of(node)
    while cur is not None and not isinstance(cur, (*FUNC_TYPES, ast.Module, ast.Lambda)):
        if isinstance(cur, _BRANCHES) and not _first_part(cur, prev):
            return True
        prev, cur = cur, m.parent_of(cur)
    return False


def _first_part(branch: ast.AST, child: ast.AST) -> bool:
    if isinstance(branch, ast.If) and _is_main_guard(branch.test):
        return child is branch.test or child in branch.body  # what runs when the script is run
    if isinstance(branch, (ast.If, ast.IfExp, ast.While)):
        return child is branch.test
    if isinstance(branch, ast.Try):
        return child in branch.body or child in branch.finalbody
    if isinstance(branch, ast.BoolOp):
        return child is branch.values[0]
    return False


def _is_main_guard(test: ast.expr) -> bool:
    """``__name__ == "__main__"`` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = (test.left, test.comparators[0])
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and any(
        isinstance(s, ast.Constant) and s.value == "__main__" for s in sides
    )


# -- Trainer constructions ------------------------------------------------------------------------
def trainer_init_forwards(inference: Inference, cls: ClassRef, keywords: set[str]) -> bool | None:
    """For a user subclass of the Trainer: True when the ``keywords`` its construction is given
    reach ``Trainer.__init__`` unchanged — no user class of the MRO defines ``__init__``, or the
    only one that does names none of them, pops none of them from its ``**kwargs`` and passes
    those to ``super().__init__(..., **kwargs)``; None otherwise (what a keyword does is not known)."""
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
    taken = _forwards_kwargs(init, kwarg.arg)
    return True if taken is not None and not keywords & taken else None


def init_parameters(func: ast.AST) -> set[str]:
    a = func.args  # type: ignore[attr-defined]
    return {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}


def _forwards_kwargs(init: ast.AST, name: str) -> set[str] | None:
    """Where ``init`` passes ``**name`` to ``super().__init__`` and otherwise only reads or pops
    literal keys of it (``kwargs.pop("x", 0)``): those keys (taken away from the Trainer, or
    maybe); None where it does anything else with it."""
    forwarded: set[int] = set()
    for n in walk(init):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "__init__"):
            continue
        receiver = n.func.value
        if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and receiver.func.id == "super":
            forwarded |= {
                id(k.value)
                for k in n.keywords
                if k.arg is None and isinstance(k.value, ast.Name) and k.value.id == name
            }
    if not forwarded:
        return None
    taken: set[str] = set()
    for n in walk(init):
        if isinstance(n, ast.Name) and n.id == name and id(n) not in forwarded:
            key = _literal_key_use(init, n)
            if key is None:
                return None
            taken.add(key)
    return taken


def _literal_key_use(init: ast.AST, node: ast.Name) -> str | None:
    """``kwargs.pop("x", ...)``/``kwargs.get("x", ...)``: ``"x"``."""
    for n in walk(init):
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.value is node
            and n.func.attr in ("pop", "get")
            and n.args
            and isinstance(n.args[0], ast.Constant)
            and isinstance(n.args[0].value, str)
        ):
            return n.args[0].value
    return None


# -- self.log / self.log_dict -----------------------------------------------------------------------
#: how many methods of the module are followed from a hook
MAX_LOG_DEPTH = 3


@dataclass(frozen=True)
class LogKey:
    """A logged key: ``exact`` when it is known; else what is known of it (``prefix``/``suffix``:
    an f-string or ``"val_" + name``), both empty when nothing is."""

    exact: str | None
    prefix: str = ""
    suffix: str = ""

    def may_be(self, name: str) -> bool:
        if self.exact is not None:
            return self.exact == name
        return (
            len(name) >= len(self.prefix) + len(self.suffix)
            and name.startswith(self.prefix)
            and name.endswith(self.suffix)
        )


@dataclass(frozen=True)
class LogCall:
    """One key a ``self.log``/``self.log_dict`` call logs, under ``hook`` (the Lightning hook it
    runs in), with ``on_step``/``on_epoch`` after Lightning's defaults for the hook (None: not a
    constant)."""

    key: LogKey
    hook: str
    call: ast.Call
    module: ModuleInfo
    on_step: bool | None
    on_epoch: bool | None

    def callback_metrics(self) -> tuple[str, ...] | None:
        """The names this key gives ``trainer.callback_metrics`` (what ``ModelCheckpoint``,
        ``EarlyStopping`` and ``ReduceLROnPlateau`` monitor): the key, and ``key_step``/
        ``key_epoch`` where both ``on_step`` and ``on_epoch`` hold — but in an evaluation hook
        only the epoch-level names (``result.py:154-159``, ``:485-487``). None where the key or
        the levels are not known."""
        if self.key.exact is None or self.on_step is None or self.on_epoch is None:
            return None
        name = self.key.exact
        forked = self.on_step and self.on_epoch
        if self.hook in facts.EVALUATION_LOG_HOOKS:
            if not self.on_epoch:
                return ()
            return (name, f"{name}_epoch") if forked else (name,)
        return (name, f"{name}_step", f"{name}_epoch") if forked else (name,)


@dataclass(frozen=True)
class Logged:
    """What a LightningModule class logs: every key found, and whether that is all of them
    (``complete``: no key that is not a literal or a known pattern, no ``self`` handed to code
    this analysis does not follow)."""

    calls: tuple[LogCall, ...]
    complete: bool


def logged(inference: Inference, cls: ClassRef) -> Logged:
    """The ``self.log``/``self.log_dict`` calls the hooks of ``cls`` reach (directly or through
    methods of ``self``), with the hook each runs under."""
    out: list[LogCall] = []
    complete = _closed(inference, cls)
    for name in facts.LOG_DEFAULTS:
        h = hook(inference, cls, name)
        if h is not None:
            complete = _log_calls(inference, cls, h.node, h.owner.module, name, 0, set(), out) and complete
    return Logged(tuple(out), complete)


#: the keys of a returned dict that 1.x (before 1.3.0) read as metrics (``trainer/logging.py``
#: ``process_dict_result`` of 1.2.10)
_LEGACY_RESULT_KEYS = frozenset({"log", "progress_bar"})


def may_return_legacy_results(inference: Inference, cls: ClassRef) -> bool:
    """Some class of ``cls``'s MRO mentions a ``"log"``/``"progress_bar"`` key or a ``Result`` class
    (``EvalResult``, ``TrainResult``): a hook may return metrics the way 1.x read them before 1.3."""
    return _bounded(inference, lambda: any(_mentions_legacy_results(k.node) for k in inference.mro(cls)), True)


def _mentions_legacy_results(cls_node: ast.ClassDef) -> bool:
    for n in walk(cls_node):
        if isinstance(n, ast.Constant) and n.value in _LEGACY_RESULT_KEYS:
            return True
        if isinstance(n, ast.keyword) and n.arg in _LEGACY_RESULT_KEYS:
            return True
        name = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else ""
        if name.endswith("Result"):
            return True
    return False


#: the qualified-name prefixes of bases that define no hook that logs (besides Lightning's own classes)
_SILENT_BASES = ("builtins.", "abc.", "typing.", "torch.nn.")


def _closed(inference: Inference, cls: ClassRef) -> bool:
    """Whether every class of ``cls``'s MRO is analysed source, one of Lightning's classes or a
    base that logs nothing (``object``, ``ABC``, ``torch.nn.Module``): no hook of a package's
    class this analysis does not read can log a key."""

    def compute() -> bool:
        for klass in inference.mro(cls):
            for base in klass.node.bases:
                values = inference.ev(base, Ctx(klass.module))
                if not values or not all(_silent_base(v) for v in values):
                    return False
        return True

    return _bounded(inference, compute, False)


def _silent_base(v: Value) -> bool:
    if isinstance(v, ClassRef):
        return True
    return isinstance(v, QualRef) and (
        facts.pytorch_class(v.qualname) is not None or v.qualname.startswith(_SILENT_BASES)
    )


def _log_calls(
    inference: Inference,
    cls: ClassRef,
    func: ast.AST,
    m: ModuleInfo,
    hook_name: str,
    depth: int,
    seen: set[int],
    out: list[LogCall],
) -> bool:
    """Adds the log calls of ``func`` (and of the methods of ``self`` it calls) to ``out``; False
    where some key may be logged that this analysis cannot see."""
    params = [*func.args.posonlyargs, *func.args.args]  # type: ignore[attr-defined]
    if depth > MAX_LOG_DEPTH or id(func) in seen or not params:
        return depth <= MAX_LOG_DEPTH
    seen.add(id(func))
    me = params[0].arg
    complete = True
    for node in own_nodes(func):
        if isinstance(node, ast.Name) and node.id == me and not _is_receiver(m, node):
            complete = False  # `self` handed on, or `log = self.log`: not followed
        if isinstance(node, ast.Call) and _is_super_call(node):
            complete = False  # a base class's hook: not followed
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == me
        ):
            continue
        attr = node.func.attr
        if attr in facts.LOG_METHODS:
            complete = _add_log(inference, node, attr, m, hook_name, out) and complete
            continue
        found = hook(inference, cls, attr)
        if found is not None and attr not in facts.LOG_DEFAULTS:
            complete = (
                _log_calls(inference, cls, found.node, found.owner.module, hook_name, depth + 1, seen, out) and complete
            )
    return complete


def _is_super_call(call: ast.Call) -> bool:
    f = call.func
    return (
        isinstance(f, ast.Attribute)
        and isinstance(f.value, ast.Call)
        and isinstance(f.value.func, ast.Name)
        and f.value.func.id == "super"
    )


def _is_receiver(m: ModuleInfo, node: ast.Name) -> bool:
    """``self`` as the receiver of an attribute (``self.x``, ``self.log(...)``), not handed on."""
    parent = m.parent_of(node)
    if not (isinstance(parent, ast.Attribute) and parent.value is node):
        return False
    grand = m.parent_of(parent)
    return parent.attr not in facts.LOG_METHODS or (isinstance(grand, ast.Call) and grand.func is parent)


def _add_log(
    inference: Inference, call: ast.Call, method: str, m: ModuleInfo, hook_name: str, out: list[LogCall]
) -> bool:
    default_step, default_epoch = facts.LOG_DEFAULTS[hook_name]
    on_step = _level(call, "on_step", default_step)
    on_epoch = _level(call, "on_epoch", default_epoch)
    keys = _log_keys(inference, call, method, m)
    out += [LogCall(k, hook_name, call, m, on_step, on_epoch) for k in keys]
    return bool(keys) and all(k.exact is not None or k.prefix or k.suffix for k in keys)


def _level(call: ast.Call, name: str, default: bool) -> bool | None:
    for k in call.keywords:
        if k.arg == name:
            if isinstance(k.value, ast.Constant) and k.value.value is None:
                return default
            return k.value.value if isinstance(k.value, ast.Constant) and isinstance(k.value.value, bool) else None
        if k.arg is None:
            return None
    return default


def _log_keys(inference: Inference, call: ast.Call, method: str, m: ModuleInfo) -> list[LogKey]:
    if method == "log":
        arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "name"), None)
        return [] if arg is None or isinstance(arg, ast.Starred) else log_keys(inference, arg, m)
    arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "dictionary"), None)
    if not isinstance(arg, ast.Dict) or any(k is None for k in arg.keys):
        return [LogKey(None)]
    return [key for k in arg.keys if k is not None for key in log_keys(inference, k, m)]


def log_keys(inference: Inference, node: ast.AST, m: ModuleInfo) -> list[LogKey]:
    """What is known of the keys a key expression gives: the strings the evaluator finds (a
    literal, a constant, an f-string over known values, one per iteration of a loop over a
    literal list or dict), else one pattern: an f-string's literal ends or ``"a" + x + "b"``'s."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [LogKey(node.value)]
    if isinstance(node, (ast.Name, ast.Attribute, ast.JoinedStr, ast.BinOp)):
        nothing: list[Value] = []
        values = _bounded(inference, lambda: inference.evaluate(node, m), nothing)
        strings = sorted({v.value for v in values if isinstance(v, Const) and isinstance(v.value, str)})
        if strings and all(isinstance(v, Const) and isinstance(v.value, str) for v in values):
            return [LogKey(s) for s in strings]
    return [_pattern(inference, node, m)]


def _one_key(inference: Inference, node: ast.AST, m: ModuleInfo) -> LogKey:
    """A part of ``"a" + x``: exact where the evaluator finds one string, else its pattern."""
    keys = log_keys(inference, node, m)
    return keys[0] if len(keys) == 1 else _pattern(inference, node, m)


def _pattern(inference: Inference, node: ast.AST, m: ModuleInfo) -> LogKey:
    if isinstance(node, ast.JoinedStr):
        parts = node.values
        prefix = parts[0].value if parts and isinstance(parts[0], ast.Constant) else ""
        suffix = parts[-1].value if len(parts) > 1 and isinstance(parts[-1], ast.Constant) else ""
        return LogKey(None, str(prefix), str(suffix))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _one_key(inference, node.left, m), _one_key(inference, node.right, m)
        if left.exact is not None and right.exact is not None:
            return LogKey(left.exact + right.exact)
        return LogKey(
            None,
            left.exact if left.exact is not None else left.prefix,
            right.exact if right.exact is not None else right.suffix,
        )
    return LogKey(None)


# -- configure_optimizers ------------------------------------------------------------------------
@dataclass(frozen=True)
class Scheduler:
    """A learning-rate scheduler ``configure_optimizers`` returns: the ``monitor`` it is given
    (None: none; ``monitor_known`` False: not a literal), whether it is a ``ReduceLROnPlateau``
    (None: not known), and its config's ``interval`` and ``strict`` (None: not a literal;
    Lightning's defaults ``"epoch"`` and True where not given, ``core/optimizer.py:277-297``)."""

    node: ast.AST
    monitor: str | None
    monitor_known: bool
    plateau: bool | None
    interval: str | None = "epoch"
    strict: bool | None = True


@dataclass(frozen=True)
class OptimizerConfig:
    """What one ``return`` of ``configure_optimizers`` gives Lightning: how many optimizers
    (None: not known) and its schedulers (None: not known)."""

    node: ast.AST
    optimizers: int | None
    schedulers: tuple[Scheduler, ...] | None


def configure_optimizers(inference: Inference, cls: ClassRef) -> list[OptimizerConfig] | None:
    """The forms ``configure_optimizers`` of ``cls`` may return (one per ``return``), as
    ``core/optimizer.py``'s ``_configure_optimizers`` reads them; None where it is not defined in
    analysed source."""
    h = hook(inference, cls, "configure_optimizers")
    if h is None:
        return None
    m = h.owner.module
    returns = [n for n in own_nodes(h.node) if isinstance(n, ast.Return)]
    return [_optimizer_config(inference, h.node, r, m) for r in returns] or [OptimizerConfig(h.node, 0, ())]


def _optimizer_config(inference: Inference, func: ast.AST, ret: ast.Return, m: ModuleInfo) -> OptimizerConfig:
    value = _resolved(func, ret.value)
    if value is None or (isinstance(value, ast.Constant) and value.value is None):
        return OptimizerConfig(ret, 0, ())
    if isinstance(value, ast.Dict):
        return _dict_config(inference, func, ret, value, m)
    if isinstance(value, (ast.List, ast.Tuple)):
        return _sequence_config(inference, func, ret, value, m)
    kind = _kind(inference, value, m)
    return OptimizerConfig(ret, 1, ()) if kind == "optimizer" else OptimizerConfig(ret, None, None)


def _sequence_config(
    inference: Inference, func: ast.AST, ret: ast.Return, value: ast.List | ast.Tuple, m: ModuleInfo
) -> OptimizerConfig:
    elts = [_resolved(func, e) for e in value.elts]
    if any(isinstance(e, ast.Starred) or e is None for e in elts):
        return OptimizerConfig(ret, None, None)
    if len(elts) == 2 and isinstance(elts[0], ast.List):
        second = _resolved(func, elts[1])
        items = (
            list(second.elts) if isinstance(second, (ast.List, ast.Tuple)) else [second] if second is not None else []
        )
        found = [_scheduler(inference, func, s, None, True, m) for s in items]
        schedulers = tuple(s for s in found if s is not None)
        known = second is not None and len(schedulers) == len(found)
        return OptimizerConfig(ret, len(elts[0].elts), schedulers if known else None)
    dicts = [e for e in elts if isinstance(e, ast.Dict)]
    if elts and len(dicts) == len(elts):
        configs = [_dict_config(inference, func, ret, e, m) for e in dicts]
        scheds: list[Scheduler] = []
        for c in configs:
            if c.schedulers is None:
                return OptimizerConfig(ret, len(elts), None)
            scheds += c.schedulers
        return OptimizerConfig(ret, len(elts), tuple(scheds))
    if all(_kind(inference, e, m) == "optimizer" for e in elts):
        return OptimizerConfig(ret, len(elts), ())
    return OptimizerConfig(ret, None, None)


def _dict_config(
    inference: Inference, func: ast.AST, ret: ast.Return, value: ast.Dict, m: ModuleInfo
) -> OptimizerConfig:
    entries = _dict_entries(value)
    if entries is None:
        return OptimizerConfig(ret, None, None)
    if "lr_scheduler" not in entries:
        return OptimizerConfig(ret, 1, ())
    monitor = entries.get("monitor")
    known = monitor is None or (isinstance(monitor, ast.Constant) and isinstance(monitor.value, str))
    top = monitor.value if isinstance(monitor, ast.Constant) and isinstance(monitor.value, str) else None
    s = _scheduler(inference, func, entries["lr_scheduler"], top, known, m)
    return OptimizerConfig(ret, 1, None if s is None else (s,))


def _dict_entries(node: ast.Dict) -> dict[str, ast.expr] | None:
    out: dict[str, ast.expr] = {}
    for k, v in zip(node.keys, node.values):
        if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
            return None
        out[k.value] = v
    return out


def _scheduler(
    inference: Inference, func: ast.AST, node: ast.AST, monitor: str | None, known: bool, m: ModuleInfo
) -> Scheduler | None:
    """A scheduler entry: a dict ``{"scheduler": ..., "monitor": ...}`` (its own monitor only,
    ``core/optimizer.py:277``) or a scheduler (the top-level ``monitor``, ``:291-298``)."""
    value = _resolved(func, node)
    if value is None:
        return None
    if isinstance(value, ast.Dict):
        entries = _dict_entries(value)
        if entries is None or "scheduler" not in entries:
            return None
        own = entries.get("monitor")
        own_known = own is None or (isinstance(own, ast.Constant) and isinstance(own.value, str))
        text = own.value if isinstance(own, ast.Constant) and isinstance(own.value, str) else None
        plateau = _plateau(inference, _resolved(func, entries["scheduler"]), m)
        flag = entries.get("reduce_on_plateau")
        if flag is not None:
            plateau = flag.value if isinstance(flag, ast.Constant) and isinstance(flag.value, bool) else None
        interval = _literal(entries.get("interval"), str, "epoch")
        strict = _literal(entries.get("strict"), bool, True)
        return Scheduler(value, text, own_known, plateau, interval, strict)
    return Scheduler(value, monitor, known, _plateau(inference, value, m))


def _literal(node: ast.AST | None, kind: type, default: T) -> T | None:
    """A scheduler config entry's literal value (``default`` where absent, None where not a literal)."""
    if node is None:
        return default
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, kind) else None  # type: ignore[return-value]


def _plateau(inference: Inference, node: ast.AST | None, m: ModuleInfo) -> bool | None:
    if not isinstance(node, ast.Call):
        return None
    names = _qualnames(inference, node.func, m)
    if len(names) == 1 and names[0].startswith(facts.TORCH_SCHEDULER_PREFIX):
        return names[0] == facts.REDUCE_LR_ON_PLATEAU
    return None


def _kind(inference: Inference, node: ast.AST | None, m: ModuleInfo) -> str | None:
    """ "optimizer" for a call of a ``torch.optim`` optimizer, "scheduler" for a scheduler."""
    if not isinstance(node, ast.Call):
        return None
    names = _qualnames(inference, node.func, m)
    if len(names) != 1:
        return None
    if names[0].startswith(facts.TORCH_SCHEDULER_PREFIX):
        return "scheduler"
    return "optimizer" if names[0].startswith(facts.TORCH_OPTIMIZER_PREFIX) else None


def _qualnames(inference: Inference, node: ast.AST, m: ModuleInfo) -> list[str]:
    nothing: list[Value] = []
    return [
        v.qualname for v in _bounded(inference, lambda: inference.evaluate(node, m), nothing) if isinstance(v, QualRef)
    ]


def _resolved(func: ast.AST, node: ast.AST | None) -> ast.AST | None:
    """``node``, or for a name the value of its only assignment in ``func``."""
    if not isinstance(node, ast.Name):
        return node
    values = [
        n.value
        for n in own_nodes(func)
        if isinstance(n, ast.Assign)
        and len(n.targets) == 1
        and isinstance(n.targets[0], ast.Name)
        and n.targets[0].id == node.id
    ]
    return values[0] if len(values) == 1 and not _rebinds(func, node.id) else None


def _rebinds(func: ast.AST, name: str) -> bool:
    for n in own_nodes(func):
        targets = (
            [n.target]
            if isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.For))
            else [i.optional_vars for i in n.items]
            if isinstance(n, ast.With)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == name for t in targets if t is not None):
            return True
    return False


# -- ModelCheckpoint / EarlyStopping ---------------------------------------------------------------
@dataclass(frozen=True)
class MonitorCallback:
    """A ``ModelCheckpoint(...)``/``EarlyStopping(...)`` construction (``kind``: the canonical class;
    a user subclass counts as it when it defines no method of its own): each argument of
    :data:`facts.MONITOR_CALLBACK_ARGUMENTS` the class takes, as the values it may have (the
    default where not given), or None where not known (a ``**kwargs``, a value the evaluator does
    not know)."""

    call: ast.Call
    kind: str
    arguments: tuple[tuple[str, tuple[object, ...] | None], ...]

    def argument(self, name: str) -> tuple[object, ...] | None:
        return dict(self.arguments).get(name)


def monitor_callback(inference: Inference, call: ast.Call, m: ModuleInfo) -> MonitorCallback | None:
    """``call`` as the construction of a monitoring callback, or None."""
    nothing: list[Value] = []
    callees = _bounded(inference, lambda: inference.evaluate(call.func, m), nothing)
    kinds = {_callback_kind(inference, v) for v in callees}
    if len(kinds) != 1:
        return None
    kind = kinds.pop()
    if kind is None:
        return None
    params = facts.MONITOR_CALLBACK_PARAMETERS[kind]
    given = _given(call, [n for n, _ in params])
    out: list[tuple[str, tuple[object, ...] | None]] = []
    for name, default in params:
        if name not in facts.MONITOR_CALLBACK_ARGUMENTS:
            continue
        if given is None:
            out.append((name, None))
        elif name in given:
            out.append((name, _constants(inference, given[name], m)))
        else:
            out.append((name, () if default is facts.REQUIRED else (default,)))
    return MonitorCallback(call, kind, tuple(out))


def _callback_kind(inference: Inference, v: object) -> str | None:
    if isinstance(v, QualRef):
        name = facts.pytorch_class(v.qualname)
    elif isinstance(v, ClassRef):
        name = _bounded(inference, lambda: pytorch_base(inference, v), None)
        if name is not None and _bounded(inference, lambda: _defines_methods(inference, v), True):
            return None  # its own `__init__` may pass anything on, its own hooks may check elsewhere or never
    else:
        return None
    return name if name in facts.MONITOR_CALLBACK_PARAMETERS else None


def _defines_methods(inference: Inference, cls: ClassRef) -> bool:
    """Some class of the project between ``cls`` and Lightning's defines a method."""
    return any(
        isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) for k in inference.mro(cls) for st in k.node.body
    )


def _given(call: ast.Call, names: list[str]) -> dict[str, ast.expr] | None:
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    out = dict(zip(names, call.args))
    out.update({k.arg: k.value for k in call.keywords if k.arg is not None})
    return out


def _constants(inference: Inference, node: ast.expr, m: ModuleInfo) -> tuple[object, ...] | None:
    if isinstance(node, ast.Constant):
        return (node.value,)
    nothing: list[Value] = []
    values = _bounded(inference, lambda: inference.evaluate(node, m), nothing)
    if not values or not all(isinstance(v, Const) for v in values):
        return None
    return tuple(dict.fromkeys(v.value for v in values if isinstance(v, Const)))
