"""``LightningCLI(Model, DataModule, ...)``: what its class arguments say statically.

``lightning/pytorch/cli.py`` (2.6.6): ``LightningCLI.__init__`` parses the command line (or
``args=``), instantiates ``model_class`` and ``datamodule_class`` (any subclass of each with
``subclass_mode_*=True``, any LightningModule/DataModule where none is given: ``:398-406``) with
their arguments from the command line/config, builds the Trainer the same way
(``instantiate_trainer``, ``:621``), and — unless ``run=False`` — runs the subcommand the command
line names, one of ``fit``/``validate``/``test``/``predict`` (``subcommands``, ``:499``;
``_run_subcommand``, ``:750``: ``trainer.<subcommand>(model=self.model, datamodule=...)``).

So the classes it runs are known, each subcommand is a choice of whoever runs the script (unless
``args=["fit", ...]`` writes it), and its Trainer is not known statically.
"""

from __future__ import annotations

import ast

from fabric_lsp.engine.python.values import (
    ClassRef,
    Const,
    Ctx,
    DictVal,
    Evaluator,
    Instance,
    LightningCLIInst,
    Origin,
    Unknown,
    Value,
)

#: the subcommands ``LightningCLI.subcommands()`` adds (``cli.py:499-506``), in that order
SUBCOMMANDS = ("fit", "validate", "test", "predict")
#: ``LightningCLI.__init__``'s leading positional parameters (``cli.py:322-324``)
_POSITIONAL = ("model_class", "datamodule_class")
#: what the evaluator says of ``cli.trainer``
TRAINER_UNKNOWN = "a `LightningCLI`: its `.trainer` is built by LightningCLI from the command line/config"
#: what fills the classes' arguments
SOURCE = "`LightningCLI` (the command line/config)"


def cli_instance(ev: Evaluator, call: ast.Call, ctx: Ctx, origin: Origin) -> LightningCLIInst:
    """The ``LightningCLI`` a ``LightningCLI(...)`` call (or a project subclass's) builds."""
    models, model_any = _classes(ev, _argument(call, 0), ctx)
    datamodules, data_any = _classes(ev, _argument(call, 1), ctx)
    subcommands, written = _subcommands(ev, call, ctx)
    return LightningCLIInst(
        origin,
        call,
        models,
        datamodules,
        model_any or _maybe_true(ev, _keyword(call, "subclass_mode_model"), ctx),
        data_any or _maybe_true(ev, _keyword(call, "subclass_mode_data"), ctx),
        subcommands,
        written,
        _dict(ev, _keyword(call, "trainer_defaults"), ctx),
    )


def attribute(cli: LightningCLIInst, attr: str) -> list[Value]:
    """``cli.model``, ``cli.datamodule`` (instances of the classes given, their arguments filled
    by the command line; unknown where the config may pick another class), ``cli.trainer``."""
    if attr == "model":
        return _instances(cli.models, cli.model_subclasses, "model")
    if attr == "datamodule":
        return _instances(cli.datamodules, cli.datamodule_subclasses, "datamodule")
    if attr == "trainer":
        return [Unknown(TRAINER_UNKNOWN)]
    return [Unknown(f"attribute `{attr}` of a `LightningCLI`")]


def runs(cli: LightningCLIInst, nodes: set[tuple], key, supers: set[tuple]) -> tuple[bool, bool]:
    """Whether the CLI may run an instance of a class whose key (``key(cls)``) is in ``nodes``
    (the class asked about and its subclasses), and whether every model it may run is one. A
    ``model_class`` that is a base of the class (a key in ``supers``) runs it only where the
    config may pick a subclass."""
    ours = [v for v in cli.models if isinstance(v, ClassRef) and key(v) in nodes]
    base = cli.model_subclasses and any(isinstance(v, ClassRef) and key(v) in supers for v in cli.models)
    every = bool(ours) and len(ours) == len(cli.models) and not cli.model_subclasses
    return bool(ours) or base, every


def _instances(classes: tuple[Value, ...], subclasses: bool, what: str) -> list[Value]:
    out: list[Value] = [
        Instance(c, filled=SOURCE) if isinstance(c, ClassRef) else Unknown(f"the `LightningCLI`'s {what}")
        for c in classes
    ]
    if subclasses or not out:
        out.append(Unknown(f"the `LightningCLI`'s {what}: a class its config picks"))
    return out


def _argument(call: ast.Call, index: int) -> ast.expr | None:
    if len(call.args) > index and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        return call.args[index]
    return _keyword(call, _POSITIONAL[index])


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _classes(ev: Evaluator, node: ast.expr | None, ctx: Ctx) -> tuple[tuple[Value, ...], bool]:
    """The class alternatives of a ``model_class``/``datamodule_class`` argument, and whether the
    config may pick any class (none given, ``None``)."""
    if node is None:
        return (), True
    values = ev.ev(node, ctx)
    if any(isinstance(v, Const) and v.value is None for v in values):
        return tuple(v for v in values if not isinstance(v, Const)), True
    return tuple(values), False


def _maybe_true(ev: Evaluator, node: ast.expr | None, ctx: Ctx) -> bool:
    """Whether a flag argument may be true (absent: its default, False)."""
    if node is None:
        return False
    return any(not (isinstance(v, Const) and v.value in (False, None, 0)) for v in ev.ev(node, ctx))


def _subcommands(ev: Evaluator, call: ast.Call, ctx: Ctx) -> tuple[tuple[str, ...], bool]:
    """The subcommands the CLI may run, and whether the code writes the one it runs."""
    run = _keyword(call, "run")
    if run is not None and all(isinstance(v, Const) and not v.value for v in ev.ev(run, ctx)):
        return (), True
    args = _keyword(call, "args")
    first = args.elts[0] if isinstance(args, (ast.List, ast.Tuple)) and args.elts else None
    if isinstance(first, ast.Constant) and first.value in SUBCOMMANDS and run is None:
        return (first.value,), True
    return SUBCOMMANDS, False


def _dict(ev: Evaluator, node: ast.expr | None, ctx: Ctx) -> Value | None:
    """The one dict display ``node`` is (written there, or bound once to a name); None for no
    ``node``, an ``Unknown`` for anything else."""
    if node is None:
        return None
    if isinstance(node, ast.Dict):
        return DictVal(node, ctx)
    values = ev.ev(node, ctx)
    return values[0] if len(values) == 1 and isinstance(values[0], DictVal) else Unknown("`trainer_defaults` not known")


def default_argument(cli: LightningCLIInst, name: str) -> tuple[ast.expr, Ctx] | None:
    """The expression ``trainer_defaults`` gives the Trainer argument ``name`` (None: none, or
    ``**`` spreads that may give it)."""
    if not isinstance(cli.trainer_defaults, DictVal):
        return None
    found = None
    for key, value in zip(cli.trainer_defaults.node.keys, cli.trainer_defaults.node.values):
        if key is None:
            return None
        if isinstance(key, ast.Constant) and key.value == name:
            found = (value, cli.trainer_defaults.ctx)
    return found


def defaults_written(cli: LightningCLIInst) -> set[str] | None:
    """The Trainer arguments ``trainer_defaults`` writes (None: not known)."""
    if cli.trainer_defaults is None:
        return set()
    if not isinstance(cli.trainer_defaults, DictVal):
        return None
    keys = cli.trainer_defaults.node.keys
    if any(not (isinstance(k, ast.Constant) and isinstance(k.value, str)) for k in keys):
        return None
    return {k.value for k in keys}  # type: ignore[union-attr]
