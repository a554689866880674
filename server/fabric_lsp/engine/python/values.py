"""The abstract values of the evaluator, and the context one evaluation runs in.

Every expression evaluates to a list of *alternatives* (the values it may have on some path).
Values are plain data: the evaluator (:mod:`fabric_lsp.engine.program.infer`) makes them, the plug-ins and
the rules read them.
"""

from __future__ import annotations

import ast
import time
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Callable, Protocol

from fabric_lsp.engine.findings import Span
from fabric_lsp.engine.python import paths
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.facts import Kind

#: How deep one inference may recurse (names → assignments → calls → returns …).
MAX_DEPTH = 40
#: How many evaluation steps one call site may take.
MAX_STEPS = 4000
#: Wall-clock cap for one call site, in seconds.
MAX_SECONDS = 2.0
#: At most this many bound arguments are kept in one evaluation context.
MAX_ENV = 24
#: At most this many alternatives are kept for one expression.
MAX_ALTERNATIVES = 32


class BudgetExceeded(Exception):
    """The evaluation ran out of its budget. ``steps``: it ran out of evaluation steps (the one
    cause a question's memo remembers, to fail at once where it is asked again: see
    :class:`~fabric_lsp.engine.workspace.memo.AskedOnce`); else its depth or its deadline."""

    def __init__(self, steps: bool = False) -> None:
        super().__init__()
        self.steps = steps


# --------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Origin:
    """Where something was decided: a source range and a short description."""

    span: Span
    text: str
    path: str | None = None


class Value:
    pass


@dataclass(frozen=True)
class Unknown(Value):
    reason: str = ""


UNKNOWN = Unknown()


@dataclass(frozen=True)
class Const(Value):
    value: object
    origin: Origin | None = None
    note: str = ""  # where the value comes from, when not a plain literal (a CLI choice …)


@dataclass(frozen=True)
class Seq(Value):
    """A list or tuple display whose length is known."""

    length: int
    items: tuple = ()
    ctx: Ctx | None = field(default=None, compare=False, hash=False)
    #: a tuple display: its items are the ones it holds wherever it is read (a list or a set
    #: may be appended to after it is written)
    fixed: bool = False


@dataclass(frozen=True)
class QualRef(Value):
    """A module or an object known by its qualified name (``lightning.fabric.strategies``)."""

    qualname: str


@dataclass(eq=False)
class ClassRef(Value):
    """A class defined in analysed source."""

    node: ast.ClassDef
    module: ModuleInfo

    @property
    def name(self) -> str:
        return self.node.name


@dataclass(eq=False)
class FuncRef(Value):
    node: ast.AST
    module: ModuleInfo
    bound_self: Value | None = None  # set for methods looked up on an instance


@dataclass(eq=False)
class ModuleRef(Value):
    module: ModuleInfo


@dataclass(eq=False)
class DictVal(Value):
    """A dict display: its key and value expressions, evaluated lazily."""

    node: ast.Dict
    ctx: Ctx


@dataclass(eq=False)
class ArgParser(Value):
    """An ``argparse``/``jsonargparse`` parser; ``parse_args()`` gives an :class:`ArgNamespace`."""

    module: ModuleInfo


@dataclass(eq=False)
class ArgNamespace(Value):
    module: ModuleInfo


@dataclass(frozen=True)
class StrategyChoice:
    """One strategy a Fabric may get. ``kind`` None means unknown."""

    kind: Kind | None
    label: str  # what the user wrote, e.g. 'strategy="deepspeed_stage_3"'
    class_name: str  # the class Lightning would name, e.g. "DeepSpeedStrategy"
    origin: Origin | None = None
    #: (argument, its possible constant values or None when not known) for the constructor
    #: arguments that decide joint setup (``facts.strategy_arguments_of_interest``); an argument
    #: not listed takes its default
    arguments: tuple[tuple[str, tuple | None], ...] = ()


@dataclass(eq=False)
class StrategyInst(Value):
    kind: Kind
    class_name: str
    origin: Origin | None
    via: tuple = ()
    #: the constructor call (its keywords are read lazily) and Fabric's own class it is
    call: ast.Call | None = None
    ctx: Ctx | None = None
    base: str | None = None
    #: one of the Trainer's strategy classes (``lightning.pytorch.strategies``): Fabric takes none
    trainer: bool = False


@dataclass(eq=False)
class AcceleratorInst(Value):
    tpu: bool
    origin: Origin | None
    class_name: str = ""
    base: str | None = None  # Fabric's own accelerator class it is


@dataclass(eq=False)
class KwargsVal(Value):
    """A ``dict(key=value, ...)`` call: keyword entries, evaluated lazily."""

    node: ast.Call
    ctx: Ctx


@dataclass(eq=False)
class PartialVal(Value):
    """``functools.partial(func, *args, **keywords)``."""

    funcs: tuple[Value, ...]
    node: ast.Call  # the partial(...) call: its keywords are bound
    ctx: Ctx


#: one argument's expression and the context it is evaluated in
Arg = tuple[ast.AST, "Ctx"]


@dataclass(frozen=True)
class ArgumentSet:
    """The keyword arguments one ``Fabric(...)`` gets on one path, wherever they are written:
    the call, a ``**kwargs`` dict (display, ``dict(...)``, merged dicts), a ``functools.partial``,
    or a subclass's ``super().__init__(...)``. ``open``: some arguments come from something not
    seen (an unknown ``**kwargs``), so an argument not listed may still be given."""

    items: tuple[tuple[str, ast.AST, Ctx], ...] = ()
    open: bool = False
    #: the decisions the set was chosen under (``**cfg`` where ``cfg`` is one of two dicts)
    path: frozenset = paths.EMPTY

    def get(self, name: str) -> Arg | None:
        for key, expr, ctx in reversed(self.items):
            if key == name:
                return expr, ctx
        return None

    def merged(self, other: ArgumentSet) -> ArgumentSet | None:
        """Both sets' arguments (``other``'s win), or None where their paths disagree."""
        path = paths.merge(self.path, other.path)
        if path is None:
            return None
        return ArgumentSet(self.items + other.items, self.open or other.open, path)


@dataclass(eq=False)
class FabricInst(Value):
    choices: tuple[StrategyChoice, ...]
    origin: Origin | None  # the Fabric(...) call
    class_name: str = "Fabric"
    #: the steps from the Fabric(...) call to the expression evaluated (assignments, calls …)
    via: tuple = ()
    #: the arguments it was built with (None: a Fabric known only by its type)
    args: ArgumentSet | None = None


@dataclass(eq=False)
class TrainerInst(Value):
    """A Lightning ``Trainer`` (``lightning.pytorch.Trainer``, ``pytorch_lightning.Trainer``, a
    project's subclass, a partial of either)."""

    origin: Origin | None  # the Trainer(...) call
    class_name: str = "Trainer"
    #: the arguments it was built with (None: a Trainer known only by its type)
    args: ArgumentSet | None = None
    #: the steps from the Trainer(...) call to the expression evaluated (assignments, calls …)
    via: tuple = ()


def with_step(values: list[Value], origin: Origin) -> list[Value]:
    """Record that ``values`` flowed through ``origin`` (for explanations)."""
    out: list[Value] = []
    for v in values:
        if isinstance(v, (FabricInst, TrainerInst)) and (not v.via or v.via[-1] != origin) and len(v.via) < 12:
            v = paths.carried(replace(v, via=v.via + (origin,)), v)
        out.append(v)
    return out


@dataclass(eq=False)
class Instance(Value):
    """An instance of a class defined in analysed source (for attribute look-ups)."""

    cls: ClassRef
    call: ast.Call | None = None
    ctx: Ctx | None = None
    #: set when the fields are filled from outside the code (a command line: ``tyro.cli``,
    #: ``HfArgumentParser``, a hydra config): the defaults are what runs as shipped, and the
    #: source named here may change every field that is not a ``Literal``
    filled: str = ""


@dataclass(eq=False)
class LightningCLIInst(Value):
    """``LightningCLI(Model, DataModule, ...)``: the classes it instantiates from the command line
    (their arguments filled there: the defaults as shipped, a ``Literal``'s choices) and the
    Trainer entry points it may run. Its Trainer is built from the command line/config."""

    origin: Origin
    call: ast.Call
    #: the ``model_class``/``datamodule_class`` alternatives (empty: any, chosen by the config)
    models: tuple[Value, ...]
    datamodules: tuple[Value, ...]
    #: whether the config may pick a subclass of each (``subclass_mode_*=True``, or no class given)
    model_subclasses: bool
    datamodule_subclasses: bool
    #: the entry points the CLI may run (``fit``, ``validate``, ``test``, ``predict``; none with
    #: ``run=False``) and whether the one it runs is written in the code (``args=["fit", ...]``)
    subcommands: tuple[str, ...]
    written: bool
    #: ``trainer_defaults={...}``: the Trainer's arguments as shipped (its ``callbacks`` are always
    #: there; every other one the command line may override): a dict display, an ``Unknown``
    #: where it is something else, None where none is given
    trainer_defaults: Value | None = None


@dataclass(eq=False)
class DataclassParser(Value):
    """``HfArgumentParser((A, B))``: it fills instances of its classes from the command line."""

    classes: tuple[Value, ...]
    module: ModuleInfo


@dataclass(eq=False)
class ValueTuple(Value):
    """A tuple whose items are values already (``parse_args_into_dataclasses()``)."""

    values: tuple[Value, ...]


# --------------------------------------------------------------------------------------------
# Evaluation context
# --------------------------------------------------------------------------------------------


@dataclass
class Budget:
    steps: int = 0
    deadline: float = 0.0
    active: set = field(default_factory=set)

    def tick(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise BudgetExceeded(steps=True)
        if self.steps % 64 == 0 and time.monotonic() > self.deadline:
            raise BudgetExceeded()


@dataclass(frozen=True, eq=False)  # identity hash: hashing nested call contexts is exponential
class Ctx:
    module: ModuleInfo
    #: (id of function node, parameter name) → (argument expression, its context), for calls
    #: evaluated with their arguments bound.
    env: tuple = ()
    depth: int = 0

    def deeper(self) -> Ctx:
        if self.depth >= MAX_DEPTH:
            raise BudgetExceeded()
        deeper = Ctx(self.module, self.env, self.depth + 1)
        signature = self.__dict__.get("signature")
        if signature is not None:  # the same bound arguments: worked out once for both
            deeper.__dict__["signature"] = signature
        return deeper

    @cached_property
    def signature(self) -> tuple:
        """The bound arguments by identity: each parameter with the id of its argument expression
        (a decision made under them: :func:`fabric_lsp.engine.python.conditions.decision`)."""
        return tuple((key, id(value[0]) if value[0] is not None else None) for key, value in self.env)

    def bound(self, func: ast.AST, name: str):
        for key, value in self.env:
            if key == (id(func), name):
                return value
        return None


def short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Modules(Protocol):
    """What the evaluator's plug-ins read of the workspace
    (:class:`fabric_lsp.engine.workspace.workspace.Workspace`): the other modules."""

    def modules_mentioning(
        self, name: str, exclude: str | None = None, importing: str | None = None
    ) -> list[ModuleInfo]: ...


class Evaluator(Protocol):
    """What a plug-in (call sites, command-line sources, Fabric arguments) may ask of the
    evaluator. The evaluator is handed to them, so that no plug-in imports :mod:`infer`."""

    budget: Budget
    #: the analysis' memo (``asked_once(key, compute, about)``), when there is one
    asked_once: Callable | None

    @property
    def workspace(self) -> Modules | None: ...
    @property
    def external_lookups(self) -> int: ...

    def ev(self, node: ast.AST, ctx: Ctx) -> list[Value]: ...

    def ev_module_name(self, name: str, m: ModuleInfo, ctx: Ctx) -> list[Value]: ...

    def mro(self, cls: ClassRef) -> list[ClassRef]: ...

    def origin(self, node: ast.AST, m: ModuleInfo) -> Origin: ...

    def reached(self, values: list[Value], stmt: ast.AST | None, ctx: Ctx) -> list[Value]: ...

    def truth(self, test: ast.AST, ctx: Ctx) -> list: ...
