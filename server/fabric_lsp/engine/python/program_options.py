"""What a command line (or the environment) can put in a value: argparse options, click options,
``Literal[...]`` annotations of dataclass fields and parameters, environment-variable defaults.
Each source is a small function the evaluator consults; a source answers with the alternatives
it can see (choices, defaults) plus an ``Unknown`` for what a user may type."""

from __future__ import annotations

import ast

from fabric_lsp.engine.python import paths
from fabric_lsp.engine.python.astwalk import walk
from fabric_lsp.engine.python.modules import ModuleInfo, callee_name
from fabric_lsp.engine.python.values import (
    UNKNOWN,
    ArgNamespace,
    ArgParser,
    ClassRef,
    Const,
    Ctx,
    DataclassParser,
    Evaluator,
    Instance,
    Origin,
    QualRef,
    Seq,
    Unknown,
    Value,
    ValueTuple,
    short,
)


def param_choices(ev: Evaluator, func: ast.AST, name: str, ctx: Ctx) -> list[Value] | None:
    """Values a CLI may fill ``name`` with: ``Literal[...]`` or a click ``Choice``."""
    for p in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs):
        if p.arg == name:
            literal = literal_values(ev, p.annotation, ctx, f"parameter `{name}`")
            if literal is not None:
                return literal
    for deco in getattr(func, "decorator_list", ()):
        if not isinstance(deco, ast.Call) or callee_name(deco) not in ("option", "argument"):
            continue
        names = [a.value for a in deco.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        dest = next((n for n in names if n.isidentifier()), None)
        if dest is None:
            longs = [n for n in names if n.startswith("--")] or names
            dest = longs[0].lstrip("-").replace("-", "_") if longs else None
        if dest != name:
            continue
        for kw in deco.keywords:
            if (
                kw.arg == "type"
                and isinstance(kw.value, ast.Call)
                and callee_name(kw.value) == "Choice"
                and kw.value.args
            ):
                return choice_values(ev, kw.value.args[0], ctx, f"the click choices of `{names[0]}`")
    return None


def choice_values(ev: Evaluator, expr: ast.AST, ctx: Ctx, what: str) -> list[Value]:
    out: list[Value] = []
    for seq in ev.ev(expr, Ctx(ctx.module, (), ctx.depth)):
        if isinstance(seq, Seq):
            for item in seq.items:
                for v in ev.ev(item, seq.ctx or ctx):
                    if isinstance(v, Const):
                        v = Const(v.value, v.origin, f'"{v.value}" from {what}')
                    out.append(v)
        else:
            out.append(Unknown(f"choices of {what}"))
    return out


def literal_values(ev: Evaluator, annotation: ast.AST | None, ctx: Ctx, what: str) -> list[Value] | None:
    """The values of a ``Literal[...]`` annotation (also inside ``Optional``/``Union``)."""
    if annotation is None or not isinstance(annotation, ast.Subscript):
        return None
    head = ev.ev(annotation.value, Ctx(ctx.module, (), ctx.depth))
    names = {v.qualname for v in head if isinstance(v, QualRef)}
    m = ctx.module
    elts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
    if names & {"typing.Literal", "typing_extensions.Literal"}:
        return [
            Const(e.value, ev.origin(e, m), f'"{e.value!s}" from `Literal[...]` of {what}')
            for e in elts
            if isinstance(e, ast.Constant)
        ] or None
    if names & {"typing.Optional", "typing.Union"}:
        out: list[Value] = []
        for e in elts:
            out += literal_values(ev, e, ctx, what) or []
        return out or None
    return None


def cli_option(ev: Evaluator, m: ModuleInfo, dest: str, ctx: Ctx) -> list[Value]:
    """``args.<dest>`` (``vars(args)["<dest>"]``) after ``parser.parse_args()``: the option's
    ``choices``, else its default and what a user may type; one decision per option, so that
    every read of it takes the same value. Writes to the namespace, in the parser's module or
    the reading one, count: an option assigned after parsing is not known; an update from a
    mapping not known (``args.update(yaml.safe_load(f))``) may change any option."""
    assigned, updated = _namespace_writes(ev, m, dest, ctx)
    if assigned is not None:
        return [Unknown(f"`{dest}` is assigned after the command line is parsed (`{assigned}`)")]
    values = _cli_option(ev, m, dest, ctx)
    if updated is not None:
        values.append(Unknown(f"the command-line options may be updated by `{updated}`"))
    return paths.tagged(values, ("option", id(m), dest), single=True)


def _namespace_writes(ev: Evaluator, m: ModuleInfo, dest: str, ctx: Ctx) -> tuple[str | None, str | None]:
    """(the write that assigns ``dest`` after parsing: ``args.dest = ...``, ``args["dest"] = ...``,
    ``setattr(args, "dest", ...)``, ``args.update(dest=...)``; the update whose keys are not
    known: ``args.update(config)``, ``vars(args).update(...)``, ``setattr(args, k, v)``), each
    as written, in the parser's module or the reading one."""
    updated: str | None = None
    for module in dict.fromkeys((m, ctx.module)):
        for top in module.tops_with(dest):
            for node in walk(top):
                if (
                    isinstance(node, (ast.Attribute, ast.Subscript))
                    and _stores(node, dest)
                    and _is_namespace(ev, node.value, module, ctx)
                ):
                    return short(module.segment(node)), None
        for written, keys in _namespace_updates(ev, module, ctx):
            if keys is None:
                updated = updated or written
            elif dest in keys:
                return written, None
    return None, updated


def _namespace_updates(ev: Evaluator, module: ModuleInfo, ctx: Ctx) -> list[tuple[str, frozenset[str] | None]]:
    """The ``update``/``setattr`` calls of ``module`` on a parsed namespace, as written, with the
    keys each sets (None: not known); once per module and analysis."""

    def compute() -> list[tuple[str, frozenset[str] | None]]:
        out = []
        for call in (*module.calls_named("update"), *module.calls_named("setattr")):
            receiver = _written_namespace(call)
            if receiver is not None and _is_namespace(ev, receiver, module, ctx):
                out.append((short(module.segment(call)), _written_keys(call)))
        return out

    if ev.asked_once is None:
        return compute()
    return list(ev.asked_once(("namespace updates", id(module)), compute, (module.tree, module)))


def _stores(node: ast.Attribute | ast.Subscript, dest: str) -> bool:
    """``x.dest = ...`` / ``x["dest"] = ...`` (also augmented, deleted)."""
    if not isinstance(node.ctx, (ast.Store, ast.Del)):
        return False
    if isinstance(node, ast.Attribute):
        return node.attr == dest
    return isinstance(node.slice, ast.Constant) and node.slice.value == dest


def _written_namespace(call: ast.Call) -> ast.expr | None:
    """What ``x.update(...)``/``setattr(x, ...)``/``x.__dict__.update(...)`` writes to."""
    if isinstance(call.func, ast.Name):
        return call.args[0] if call.args else None
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    if isinstance(receiver, ast.Attribute) and receiver.attr == "__dict__":
        return receiver.value
    return receiver


def _written_keys(call: ast.Call) -> frozenset[str] | None:
    """The keys a write sets, where all are written out (``setattr(x, "k", v)``,
    ``x.update({"k": v}, j=w)``); None where some key is not known."""
    if isinstance(call.func, ast.Name):  # setattr(x, key, value)
        key = call.args[1] if len(call.args) > 1 else None
        return frozenset({key.value}) if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
    keys = {k.arg for k in call.keywords}
    if None in keys:
        return None
    for arg in call.args:
        if not isinstance(arg, ast.Dict) or not all(
            isinstance(k, ast.Constant) and isinstance(k.value, str) for k in arg.keys
        ):
            return None
        keys |= {k.value for k in arg.keys}
    return frozenset(k for k in keys if k is not None)


def _is_namespace(ev: Evaluator, expr: ast.expr, module: ModuleInfo, ctx: Ctx) -> bool:
    return any(isinstance(v, ArgNamespace) for v in ev.ev(expr, Ctx(module, (), ctx.depth)))


def _cli_option(ev: Evaluator, m: ModuleInfo, dest: str, ctx: Ctx) -> list[Value]:
    grouped = added_arguments(ev, m, dest, ctx)
    if grouped is not None:
        return grouped
    for call in m.calls_by_name.get("add_argument", []):
        names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        kwargs = {kw.arg: kw.value for kw in call.keywords if kw.arg}
        explicit = kwargs.get("dest")
        if isinstance(explicit, ast.Constant):
            option_dest = explicit.value
        else:
            longs = [n for n in names if n.startswith("--")] or names
            option_dest = longs[0].lstrip("-").replace("-", "_") if longs else None
        if option_dest != dest:
            continue
        option = names[0] if names else dest
        if "choices" in kwargs:
            return choice_values(ev, kwargs["choices"], Ctx(m, (), ctx.depth), f"the choices of `{option}`")
        flag = _flag_values(kwargs.get("action"), kwargs.get("default"), m, option)
        if flag is not None:
            return flag
        free = Unknown(f"free command-line option `{option}`")
        if "default" in kwargs:  # what the script does when run as shipped
            return defaults(ev, kwargs["default"], Ctx(m, (), ctx.depth), f"the default of `{option}`") + [free]
        return [free]
    return [Unknown(f"command-line option `{dest}`")]


def _flag_values(action: ast.expr | None, default: ast.expr | None, m: ModuleInfo, option: str) -> list[Value] | None:
    """``action="store_true"``/``"store_false"``: the option's two values, its default (``False``
    for ``store_true``, or the literal ``default=``) and the value the flag sets."""
    if not (isinstance(action, ast.Constant) and action.value in ("store_true", "store_false")):
        return None
    given = action.value == "store_true"
    if default is None:
        start: object = not given
    elif isinstance(default, ast.Constant):
        start = default.value
    else:
        return None
    origin = Origin(m.span(action), m.segment(action), m.path)
    out: list[Value] = [Const(start, origin, f"{start!r}, the default of `{option}`")]
    if start != given:
        out.append(Const(given, origin, f"{given!r} with `{option}`"))
    return out


def defaults(ev: Evaluator, expr: ast.AST, ctx: Ctx, what: str) -> list[Value]:
    out: list[Value] = []
    for v in ev.ev(expr, ctx):
        if isinstance(v, Const) and isinstance(v.value, str):
            v = Const(v.value, v.origin, f'"{v.value}", {what}')
        out.append(v)
    return out


def _argument_parser(ev: Evaluator, node: ast.Call, ctx: Ctx) -> list[Value]:
    return [ArgParser(ctx.module)]


def _environment_variable(ev: Evaluator, node: ast.Call, ctx: Ctx) -> list[Value]:
    if len(node.args) >= 2:
        key = ctx.module.segment(node.args[0])
        return defaults(ev, node.args[1], ctx, f"the default of environment variable {key}") + [
            Unknown(f"environment variable {key}")
        ]
    return [Unknown("environment variable")]


def filled(target: Value, source: str) -> Value:
    """An instance of ``target`` whose fields ``source`` fills (defaults: the class's own)."""
    return Instance(target, filled=source) if isinstance(target, ClassRef) else Unknown(f"value filled by {source}")


def _filled_instance(ev: Evaluator, node: ast.Call, ctx: Ctx) -> list[Value]:
    """``CLI(Config)``, ``tyro.cli(Config)``: an instance of the class, filled from the CLI."""
    if not node.args:
        return [Unknown("value filled from the command line")]
    source = f"`{callee_name(node)}(...)`"
    return [filled(target, source) for target in ev.ev(node.args[0], ctx)]


def _dataclass_parser(ev: Evaluator, node: ast.Call, ctx: Ctx) -> list[Value]:
    """``HfArgumentParser((A, B))``: a parser whose ``parse_args_into_dataclasses()`` gives an
    instance of each class, filled from the command line."""
    classes: list[Value] = []
    if node.args:
        for v in ev.ev(node.args[0], ctx):
            if isinstance(v, Seq) and v.ctx is not None:
                classes += [next(iter(ev.ev(item, v.ctx)), UNKNOWN) for item in v.items]
            else:
                classes.append(v)
    return [DataclassParser(tuple(classes), ctx.module)]


def _field(ev: Evaluator, node: ast.Call, ctx: Ctx) -> list[Value]:
    """``dataclasses.field(default=...)``: the default; a factory's result is not followed."""
    for kw in node.keywords:
        if kw.arg == "default":
            return ev.ev(kw.value, ctx)
    return [Unknown("a field without a default")]


def _typer_parameter(ev: Evaluator, node: ast.Call, ctx: Ctx) -> list[Value]:
    """``typer.Option(default, ...)`` / ``typer.Argument(default)`` as a parameter's default: the
    default it declares (``...``: the option is required, its value not known)."""
    default = node.args[0] if node.args else next((kw.value for kw in node.keywords if kw.arg == "default"), None)
    if default is None or (isinstance(default, ast.Constant) and default.value is Ellipsis):
        return [Unknown("a required command-line option")]
    return ev.ev(default, ctx)


def parsed_dataclasses(parser: DataclassParser) -> list[Value]:
    """``parser.parse_args_into_dataclasses()``."""
    return [ValueTuple(tuple(filled(c, "`HfArgumentParser`") for c in parser.classes))]


def added_arguments(ev: Evaluator, m: ModuleInfo, dest: str, ctx: Ctx) -> list[Value] | None:
    """``args.<dest>`` after simple_parsing's ``parser.add_arguments(Config, dest=...)``."""
    for call in m.calls_by_name.get("add_arguments", []):
        kwargs = {kw.arg: kw.value for kw in call.keywords if kw.arg}
        named = kwargs.get("dest")
        if isinstance(named, ast.Constant) and named.value == dest and call.args:
            return [filled(v, "the command line (`add_arguments`)") for v in ev.ev(call.args[0], Ctx(m, (), ctx.depth))]
    return None


#: Callables whose result comes from the command line or the environment, by qualified name.
CALL_SOURCES = {
    "argparse.ArgumentParser": _argument_parser,
    "jsonargparse.ArgumentParser": _argument_parser,
    "os.environ.get": _environment_variable,
    "os.getenv": _environment_variable,
    "os.environ.setdefault": _environment_variable,
    "transformers.HfArgumentParser": _dataclass_parser,
    "transformers.hf_argparser.HfArgumentParser": _dataclass_parser,
    "dataclasses.field": _field,
    "typer.Option": _typer_parameter,
    "typer.Argument": _typer_parameter,
    "typer.params.Option": _typer_parameter,
    "typer.params.Argument": _typer_parameter,
    "simple_parsing.ArgumentParser": _argument_parser,
    "jsonargparse.CLI": _filled_instance,
    "jsonargparse.auto_cli": _filled_instance,
    "tyro.cli": _filled_instance,
    "simple_parsing.parse": _filled_instance,
}


def call_value(ev: Evaluator, qualname: str, node: ast.Call, ctx: Ctx) -> list[Value] | None:
    """The values a call of ``qualname`` gives, when it is a command-line or environment source."""
    source = CALL_SOURCES.get(qualname)
    return None if source is None else source(ev, node, ctx)
