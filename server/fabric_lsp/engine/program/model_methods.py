"""Methods of set-up models: what class a set-up model is an instance of, which method
``model.<name>(...)`` runs, and whether that method runs a module (calls a module, so that a
forward hook on it fires; Lightning's call tracker counts exactly that, wrappers.py:201-223).

A method *runs a module* when its body (or a method of the same class it calls on ``self``,
followed a few levels) calls ``self(...)``, a submodule ``self.<attr>(...)`` (an attribute
assigned a ``torch.nn`` module, an instance of a module class of analysed source, or a library
model), an element ``self.<attr>[i](...)`` or a loop variable over ``self.<attr>``, or a library
method known to call the model (Hugging Face ``generate``). Calls under ``if``/``try`` or after an
early ``return`` are *conditional*; loops count as running (the loop is there to run).

Pure functions over the parsed modules and the evaluator (no pygls, no rule import).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from fabric_lsp import facts
from fabric_lsp.engine.program.infer import Inference
from fabric_lsp.engine.program.setups import FUNC_TYPES, SetupCall, Setups, assigned_values, own_nodes
from fabric_lsp.engine.python.astwalk import statements
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.python.values import ClassRef, Instance, QualRef

#: how many methods of the class are followed from the called one
MAX_METHOD_DEPTH = 4
#: how far a model expression is followed back to the call that builds it
MAX_BUILD_DEPTH = 4
_NOT_METHOD_DECORATORS = frozenset({"staticmethod", "property", "cached_property"})
_BRANCHES = tuple(t for t in (ast.If, ast.IfExp, ast.Try, ast.BoolOp, getattr(ast, "Match", None)) if t is not None)


@dataclass(frozen=True)
class ModelClass:
    """What a set-up model is an instance of: a class of analysed source (``cls``) or a library
    model (``qualname``: its class or factory, ``transformers.AutoModel.from_pretrained``)."""

    cls: ClassRef | None
    qualname: str | None
    built: ast.AST
    module: ModuleInfo

    @property
    def name(self) -> str:
        if self.cls is not None:
            return self.cls.name
        parts = (self.qualname or "?").split(".")
        return parts[-2] if parts[-1] in facts.LIBRARY_MODEL_FACTORIES and len(parts) > 1 else parts[-1]


@dataclass(frozen=True)
class ModuleRun:
    """Where a method runs a module: ``text`` says how (``self.decoder(x)`` calls the submodule
    ``decoder``), ``call`` is the call in ``module`` (None for a library method)."""

    text: str
    call: ast.AST | None
    module: ModuleInfo | None
    conditional: bool


@dataclass(frozen=True)
class MethodRun:
    """What ``model.<name>()`` runs on a model of class ``owner``: ``kind`` is "method" (a method
    of analysed source, ``method``), "library" (a library method known to call the model),
    "not-method" (a submodule, a ``staticmethod``, a property: Lightning never wraps it) or
    "unknown". ``runs`` says where the method runs a module (None: nowhere this analysis sees)."""

    kind: str
    owner: str
    method: ast.AST | None = None
    module: ModuleInfo | None = None
    runs: ModuleRun | None = None


# -- the class of a set-up model ------------------------------------------------------------------
def model_classes(inference: Inference, setup: SetupCall) -> tuple[list[ModelClass], bool]:
    """The classes the model given to ``setup`` may be an instance of, and whether some
    alternative is not known."""
    call = setup.call
    arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "module"), None)
    if arg is None or isinstance(arg, ast.Starred):
        return [], True
    out: list[ModelClass] = []
    unknown = _classes_of(inference, arg, setup.module, setup.module.scope_of(arg), 0, out)
    unique = {(id(c.cls.node) if c.cls else c.qualname): c for c in out}
    return list(unique.values()), unknown or not out


def _classes_of(
    inference: Inference, expr: ast.AST, m: ModuleInfo, scope: ast.AST, depth: int, out: list[ModelClass]
) -> bool:
    """Adds the classes ``expr`` builds to ``out``; True when some alternative is not known."""
    if depth > MAX_BUILD_DEPTH:
        return True
    if isinstance(expr, ast.Call):
        return _call_classes(inference, expr, m, scope, depth, out)
    found = [v for v in inference.evaluate(expr, m) if isinstance(v, Instance)]
    out += [ModelClass(v.cls, None, v.call or expr, m) for v in found]
    if found:
        return False
    if isinstance(expr, ast.Name):
        values = [v for v in assigned_values(scope, expr.id) if isinstance(v, ast.Call)]
        values = [v for v in values if not _is_setup(v)]
        unknown = not values
        for value in values:
            unknown = _classes_of(inference, value, m, scope, depth + 1, out) or unknown
        return unknown
    return True


def _is_setup(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr in facts.MODEL_SETUP_METHODS


def _call_classes(
    inference: Inference, call: ast.Call, m: ModuleInfo, scope: ast.AST, depth: int, out: list[ModelClass]
) -> bool:
    unknown = False
    for callee in inference.evaluate(call.func, m):
        if isinstance(callee, ClassRef):
            out.append(ModelClass(callee, None, call, m))
        elif isinstance(callee, QualRef) and callee.qualname == "torch.compile" and call.args:
            unknown = _classes_of(inference, call.args[0], m, scope, depth + 1, out) or unknown
        elif isinstance(callee, QualRef) and facts.is_module_class_name(callee.qualname):
            out.append(ModelClass(None, callee.qualname, call, m))
        else:
            found = [v for v in inference.evaluate(call, m) if isinstance(v, Instance)]
            out += [ModelClass(v.cls, None, v.call or call, m) for v in found]
            unknown = unknown or not found
    return unknown


def compiled(inference: Inference, setup: SetupCall) -> bool | None:
    """Whether the model given to ``setup`` is a ``torch.compile`` result that setup compiles again
    (then the module is wrapped whatever the strategy): True on every alternative, None on some,
    False on none (or ``_reapply_compile=False``)."""
    call = setup.call
    if any(
        k.arg == "_reapply_compile" and isinstance(k.value, ast.Constant) and not k.value.value for k in call.keywords
    ):
        return False
    arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "module"), None)
    if arg is None:
        return False
    values = [arg]
    if isinstance(arg, ast.Name):
        values = [
            v
            for v in assigned_values(setup.module.scope_of(arg), arg.id)
            if not (isinstance(v, ast.Call) and _is_setup(v))
        ]
    found = [_is_compile(inference, v, setup.module) for v in values]
    if found and all(found):
        return True
    return None if any(found) else False


def _is_compile(inference: Inference, node: ast.AST, m: ModuleInfo) -> bool:
    if not isinstance(node, ast.Call):
        return False
    return any(
        isinstance(v, QualRef) and v.qualname in facts.COMPILE_FUNCTIONS for v in inference.evaluate(node.func, m)
    )


# -- the method a call runs -----------------------------------------------------------------------
def method_run(inference: Inference, model_class: ModelClass, name: str) -> MethodRun:
    """What ``model.<name>()`` runs on an instance of ``model_class``."""
    if model_class.cls is None:
        q = model_class.qualname or ""
        if facts.library_method_calls_model(q, name):
            return MethodRun("library", model_class.name, runs=_library_run(model_class.name, name))
        return MethodRun("unknown", model_class.name)
    found = _find_method(inference, model_class.cls, name)
    if found is None:
        if _is_module_attribute(inference, model_class.cls, name):
            return MethodRun("not-method", model_class.name)
        library = [q for q in library_bases(inference, model_class.cls) if facts.library_method_calls_model(q, name)]
        if library:
            return MethodRun("library", model_class.name, runs=_library_run(library[0].rsplit(".", 1)[-1], name))
        return MethodRun("unknown", model_class.name)
    func, klass = found
    if func is None:
        return MethodRun("not-method", klass.name)
    runs = runs_module(inference, model_class.cls, func, klass.module, 0, set())
    return MethodRun("method", klass.name, func, klass.module, runs)


def _library_run(owner: str, name: str) -> ModuleRun:
    return ModuleRun(f"`{owner}.{name}` calls the model itself at every step", None, None, False)


def _find_method(inference: Inference, cls: ClassRef, name: str) -> tuple[ast.AST | None, ClassRef] | None:
    """The ``def`` of ``name`` in the first class of ``cls``'s MRO that defines it (``None`` as
    the def when it is not a method: a ``staticmethod`` or a property), or None."""
    for klass in inference.mro(cls):
        for item in klass.node.body:
            if isinstance(item, FUNC_TYPES) and item.name == name:
                decorators = {_decorator_name(d) for d in item.decorator_list}
                return (None if decorators & _NOT_METHOD_DECORATORS else item), klass
    return None


def _decorator_name(node: ast.AST) -> str:
    node = node.func if isinstance(node, ast.Call) else node
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def library_bases(inference: Inference, cls: ClassRef) -> list[str]:
    """The qualified names of the library classes ``cls`` derives from."""
    out: list[str] = []
    for klass in inference.mro(cls):
        for base in klass.node.bases:
            out += [v.qualname for v in inference.evaluate(base, klass.module) if isinstance(v, QualRef)]
    return out


def is_module_class(inference: Inference, cls: ClassRef) -> bool:
    return any(facts.is_module_class_name(q) for q in library_bases(inference, cls))


def _is_module_attribute(inference: Inference, cls: ClassRef, attr: str) -> bool:
    """Whether a method of ``cls`` assigns ``self.<attr>`` a module (a ``torch.nn`` class, a
    module class of analysed source, a library model)."""
    return any(_builds_module(inference, value, m) for value, m in _self_attr_values(inference, cls, attr))


def _is_self_attr(node: ast.AST, me: str, attr: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == attr
        and isinstance(node.value, ast.Name)
        and node.value.id == me
    )


def _builds_module(inference: Inference, value: ast.AST, m: ModuleInfo) -> bool:
    if not isinstance(value, ast.Call):
        return False
    for callee in inference.evaluate(value.func, m):
        if isinstance(callee, QualRef) and facts.is_module_class_name(callee.qualname):
            return True
        if isinstance(callee, ClassRef) and is_module_class(inference, callee):
            return True
    return False


# -- whether a method runs a module ---------------------------------------------------------------
def runs_module(
    inference: Inference, cls: ClassRef, func: ast.AST, m: ModuleInfo, depth: int, seen: set[int]
) -> ModuleRun | None:
    """Where ``func`` (a method of ``cls``) runs a module: the first unconditional call found,
    else the first conditional one, else None."""
    if depth > MAX_METHOD_DEPTH or id(func) in seen:
        return None
    seen.add(id(func))
    params = [*func.args.posonlyargs, *func.args.args]  # type: ignore[attr-defined]
    if not params:
        return None
    me = params[0].arg
    loops = _module_loops(func, me)
    first: ModuleRun | None = None
    for node in own_nodes(func):
        if not isinstance(node, ast.Call):
            continue
        run = _call_runs(inference, cls, node, me, loops, m, depth, seen)
        if run is None:
            continue
        if _conditional(m, node, func) and not run.conditional:
            run = ModuleRun(run.text, run.call, run.module, True)
        if not run.conditional:
            return run
        first = first or run
    return first


def _module_loops(func: ast.AST, me: str) -> dict[str, str]:
    """Loop variables over ``self.<attr>`` (``for layer in self.layers:``) → ``attr``."""
    out: dict[str, str] = {}
    for node in own_nodes(func):
        if isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.target, ast.Name):
            it = node.iter
            if isinstance(it, ast.Attribute) and isinstance(it.value, ast.Name) and it.value.id == me:
                out[node.target.id] = it.attr
    return out


def _call_runs(
    inference: Inference,
    cls: ClassRef,
    call: ast.Call,
    me: str,
    loops: dict[str, str],
    m: ModuleInfo,
    depth: int,
    seen: set[int],
) -> ModuleRun | None:
    f = call.func
    text = m.segment(call)
    short = text if len(text) <= 50 else text[:47] + "..."
    if isinstance(f, ast.Name) and f.id == me:
        return ModuleRun(f"`{short}` calls the model itself", call, m, False)
    if isinstance(f, ast.Name) and f.id in loops and _is_module_attribute(inference, cls, loops[f.id]):
        return ModuleRun(f"`{short}` calls a submodule of `{me}.{loops[f.id]}`", call, m, False)
    sub = f.value if isinstance(f, ast.Subscript) else None
    if (
        isinstance(sub, ast.Attribute)
        and _is_self_attr(sub, me, sub.attr)
        and _is_module_attribute(inference, cls, sub.attr)
    ):
        return ModuleRun(f"`{short}` calls a submodule of `{me}.{sub.attr}`", call, m, False)
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Attribute) and _is_self_attr(f.value, me, f.value.attr):
        return _submodule_method_runs(inference, cls, call, f.value.attr, f.attr, short, depth, seen)
    if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == me):
        return None
    found = _find_method(inference, cls, f.attr)
    if found is not None and found[0] is not None:
        inner = runs_module(inference, cls, found[0], found[1].module, depth + 1, seen)
        if inner is None:
            return None
        return ModuleRun(f"`{short}` runs `{f.attr}`, where {inner.text}", inner.call, inner.module, inner.conditional)
    if found is None and _is_module_attribute(inference, cls, f.attr):
        return ModuleRun(f"`{short}` calls the submodule `{f.attr}`", call, m, False)
    if found is None and any(facts.library_method_calls_model(q, f.attr) for q in library_bases(inference, cls)):
        return ModuleRun(f"`{short}` runs the library's `{f.attr}`, which calls the model itself", call, m, False)
    return None


def _submodule_method_runs(
    inference: Inference, cls: ClassRef, call: ast.Call, attr: str, method: str, short: str, depth: int, seen: set[int]
) -> ModuleRun | None:
    """``self.<attr>.<method>(...)``: a method of a submodule that runs a module (a library model's
    ``generate``, or a method of a module class of analysed source that does)."""
    for value, m in _self_attr_values(inference, cls, attr):
        for callee in inference.evaluate(value.func, m):
            if isinstance(callee, QualRef) and facts.library_method_calls_model(callee.qualname, method):
                return ModuleRun(f"`{short}` runs the library's `{method}` of the submodule `{attr}`", call, m, False)
            if isinstance(callee, ClassRef) and is_module_class(inference, callee):
                found = _find_method(inference, callee, method)
                inner = (
                    runs_module(inference, callee, found[0], found[1].module, depth + 1, seen)
                    if found and found[0]
                    else None
                )
                if inner is not None:
                    return ModuleRun(
                        f"`{short}` runs `{attr}.{method}`, where {inner.text}",
                        inner.call,
                        inner.module,
                        inner.conditional,
                    )
    return None


def _self_attr_values(inference: Inference, cls: ClassRef, attr: str) -> list[tuple[ast.Call, ModuleInfo]]:
    """The calls the methods of ``cls`` (and its bases) assign to ``self.<attr>``."""
    out: list[tuple[ast.Call, ModuleInfo]] = []
    for klass in inference.mro(cls):
        for item in klass.node.body:
            if not isinstance(item, FUNC_TYPES) or not item.args.args:
                continue
            me = item.args.args[0].arg
            for node in statements(item):
                if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    if any(_is_self_attr(t, me, attr) for t in targets):
                        out.append((node.value, klass.module))
    return out


def _conditional(m: ModuleInfo, node: ast.AST, func: ast.AST) -> bool:
    """Whether ``node`` runs only on some paths through ``func``: under a branch, or after an
    early ``return``/``raise``."""
    prev, cur = node, m.parent_of(node)
    while cur is not None and cur is not func:
        if isinstance(cur, _BRANCHES) and not _on_every_path(cur, prev):
            return True
        prev, cur = cur, m.parent_of(cur)
    line = getattr(node, "lineno", 0)
    return any(isinstance(n, (ast.Return, ast.Raise)) and n.lineno < line for n in own_nodes(func))


def _on_every_path(branch: ast.AST, child: ast.AST) -> bool:
    """Whether ``child`` of ``branch`` runs whenever ``branch`` does: the test of an ``if``, the
    body or ``finally`` of a ``try``, the first operand of ``and``/``or``."""
    if isinstance(branch, (ast.If, ast.IfExp)):
        return child is branch.test
    if isinstance(branch, ast.Try):
        return child in branch.body or child in branch.finalbody
    if isinstance(branch, ast.BoolOp):
        return child is branch.values[0]
    return False


# -- marks ----------------------------------------------------------------------------------------
def forward_marks(
    setups: Setups, wanted: list[SetupCall], name: str, modules: list[ModuleInfo]
) -> list[tuple[ModuleInfo, ast.Call]]:
    """The ``<model>.mark_forward_method("name")`` calls (or ``(<model>.name)``) in ``modules``
    whose receiver is a model set up by one of ``wanted``."""
    ids = {id(s.call) for s in wanted}
    out: list[tuple[ModuleInfo, ast.Call]] = []
    for m in modules:
        for call in m.calls_by_name.get("mark_forward_method", []):
            if not (isinstance(call.func, ast.Attribute) and call.args and _names(call.args[0], name)):
                continue
            receiver = call.func.value
            if (
                isinstance(receiver, (ast.Name, ast.Attribute))
                and {id(s.call) for s in setups.models(receiver, m)} & ids
            ):
                out.append((m, call))
    return out


def _names(arg: ast.AST, name: str) -> bool:
    if isinstance(arg, ast.Constant):
        return arg.value == name
    return isinstance(arg, ast.Attribute) and arg.attr == name
