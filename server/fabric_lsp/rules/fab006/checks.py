"""FAB006's checks: for each ``save``/``load``/``load_raw`` call on a Fabric, the problem Lightning
raises at it — either under every strategy (swapped arguments, a bad ``filter=``) or under the
strategies that checkpoint through their set-up model (DeepSpeed, FSDP, ModelParallel, XLAFSDP)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable

from fabric_lsp import facts
from fabric_lsp.engine.lightning.configurations import Scenario, is_deepspeed
from fabric_lsp.engine.python.astwalk import walk
from fabric_lsp.engine.python.values import Const, DictVal, FuncRef, Seq
from fabric_lsp.engine.semantic.model import SemanticModel

WATCHED = ("save", "load", "load_raw")


@dataclass(frozen=True)
class Check:
    what: str  # the misuse, in the message's words
    raised: str  # what Lightning raises (or warns)
    where: str  # the 2.6.6 source location
    #: None: fails under every strategy; else True/False/None (unknown) per scenario
    fails: Callable[[Scenario], bool | None] | None = None
    warning_only: bool = False
    #: for a strategy-dependent check, which of the strategy's facts give Lightning's message:
    #: "filter", "model", "load_state", "load_raw" (see ``lightning_message``)
    kind: str = ""


def argument(call: ast.Call, index: int, name: str) -> ast.expr | None:
    """The expression passed for parameter ``name`` (position ``index``), or None."""
    if any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        return None
    if len(call.args) > index:
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == name), None)


def unpacked(call: ast.Call) -> bool:
    return any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)


# -- what an expression certainly is ------------------------------------------------------------
def is_state_dict_call(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "state_dict"


def is_path_literal(expr: ast.AST) -> bool:
    """A string literal, an f-string, or a ``Path(...)``/``pathlib.Path(...)`` call (or ``/`` on one)."""
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, str)
    if isinstance(expr, ast.JoinedStr):
        return True
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):
        return is_path_literal(expr.left)
    if isinstance(expr, ast.Call):
        func = expr.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        return name in ("Path", "PurePath", "PosixPath")
    return False


def is_state_literal(expr: ast.AST) -> bool:
    """A dict display or a ``.state_dict()`` call (the forms the swap fix rewrites)."""
    return isinstance(expr, (ast.Dict, ast.DictComp)) or is_state_dict_call(expr)


def is_path(model: SemanticModel, expr: ast.expr) -> bool:
    if is_path_literal(expr):
        return True
    values = model.values(expr)
    return bool(values) and all(isinstance(v, Const) and isinstance(v.value, str) for v in values)


def is_state(model: SemanticModel, expr: ast.expr) -> bool:
    if is_state_literal(expr):
        return True
    if model.plain(expr):
        return False
    values = model.values(expr)
    return bool(values) and all(isinstance(v, DictVal) for v in values)


def not_a_module(model: SemanticModel, expr: ast.expr) -> bool:
    """``expr`` is certainly not an ``nn.Module``: a literal, a ``.state_dict()`` call, arithmetic,
    or a name whose every value is a constant, a sequence or a dict."""
    if isinstance(expr, (ast.Constant, ast.JoinedStr, ast.Dict, ast.List, ast.Tuple, ast.Set, ast.BinOp, ast.Compare)):
        return True
    if isinstance(expr, (ast.DictComp, ast.ListComp, ast.SetComp)) or is_state_dict_call(expr):
        return True
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in ("item", "tolist"):
        return True
    if not isinstance(expr, (ast.Name, ast.Attribute)):
        return False
    if isinstance(expr, ast.Name) and counts_over_range(model, expr):
        return True
    values = model.values(expr)
    return bool(values) and all(isinstance(v, (Const, Seq, DictVal)) for v in values)


def counts_over_range(model: SemanticModel, name: ast.Name) -> bool:
    """``name`` is bound only by ``for name in range(...)`` loops of its scope (an int)."""
    scope = model.module.scope_of(name)
    loops = [
        n for n in walk(scope) if isinstance(n, ast.For) and isinstance(n.target, ast.Name) and n.target.id == name.id
    ]
    if not loops or not all(_is_range(n.iter) for n in loops):
        return False
    assigned = [
        n
        for n in walk(scope)
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr))
        and any(isinstance(t, ast.Name) and t.id == name.id for t in _targets(n))
    ]
    return not assigned


def _is_range(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "range"


def _targets(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.Assign):
        return [t for target in node.targets for t in walk(target)]
    return [node.target]  # type: ignore[attr-defined]


def dict_display(model: SemanticModel, expr: ast.expr | None) -> ast.Dict | None:
    """The dict display ``expr`` is (or the one display a name in this document is bound to)."""
    if expr is None:
        return None
    if isinstance(expr, ast.Dict):
        return expr
    if model.plain(expr):  # `checkpoint_dir / "hparams.yaml"`: no dict, whatever the directory is
        return None
    values = model.values(expr)
    if len(values) == 1 and isinstance(values[0], DictVal) and values[0].ctx.module is model.module:
        return values[0].node
    return None


def constant_keys(d: ast.Dict) -> list[str] | None:
    """The display's keys when all are string constants (no ``**`` unpacking), else None."""
    out = []
    for k in d.keys:
        if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
            return None
        out.append(k.value)
    return out


# -- the per-strategy predicates ----------------------------------------------------------------
def checkpoint_facts(s: Scenario) -> facts.CheckpointFacts | None:
    base = s.outcome.strategy_base if s.outcome is not None else None
    return facts.CHECKPOINT_STRATEGIES.get(base or "")


def _strategy_arg(s: Scenario, name: str, default: object) -> object:
    return facts.strategy_argument(s.args.strategy if s.args is not None else None, name, default)


def filter_fails(s: Scenario) -> bool | None:
    cf = checkpoint_facts(s)
    if cf is None or cf.filter_error is None:
        return False
    if cf.filter_rejected_when is None:
        return True
    name, default, rejected = cf.filter_rejected_when
    value = _strategy_arg(s, name, default)
    return None if value is facts.NOT_KNOWN else value in rejected


def _full_weights_load(s: Scenario) -> bool | None:
    """DeepSpeed's ``load_full_weights=True`` at ZeRO-3: ``load`` takes the plain path."""
    name, default = facts.DEEPSPEED_FULL_WEIGHTS
    full = _strategy_arg(s, name, default)
    stage = facts.deepspeed_stage(s.args.strategy) if s.args is not None else None
    if full is facts.NOT_KNOWN:
        return None
    if not full:
        return False
    return None if stage is None else stage == 3


def model_state_fails(load: bool) -> Callable[[Scenario], bool | None]:
    """The strategy needs exactly one set-up model in the state (at ``load`` DeepSpeed's
    full-weights path excepted)."""

    def fails(s: Scenario) -> bool | None:
        cf = checkpoint_facts(s)
        if cf is None:
            return False
        if load and cf.label == "DeepSpeedStrategy":
            full = _full_weights_load(s)
            return None if full is None else not full
        return True

    return fails


def load_raw_fails(optimizer: bool) -> Callable[[Scenario], bool | None]:
    def fails(s: Scenario) -> bool | None:
        cf = checkpoint_facts(s)
        if cf is None or cf.load_raw_rejects is None:
            return False
        return cf.load_raw_rejects == "any" or optimizer

    return fails


# -- the checks -----------------------------------------------------------------------------------
def checks_for(model: SemanticModel, call: ast.Call) -> list[Check]:
    """The problems at ``call`` (a ``save``/``load``/``load_raw`` on a Fabric), most certain first."""
    name = call.func.attr  # type: ignore[attr-defined]
    if name == "save":
        return save_checks(model, call)
    if name == "load":
        return load_checks(model, call)
    return load_raw_checks(model, call)


def save_checks(model: SemanticModel, call: ast.Call) -> list[Check]:
    if len(call.args) >= 2 and not unpacked(call) and swapped(model, call):
        raised, where = facts.SWAPPED_SAVE_ERROR
        return [Check("arguments swapped: the signature is `save(path, state)`", raised, where)]
    out: list[Check] = []
    flt = argument(call, 2, "filter")
    state = argument(call, 1, "state")
    if flt is not None and not (isinstance(flt, ast.Constant) and flt.value is None):
        out += filter_checks(model, flt, state)
        out.append(
            Check(
                "`filter=` under a strategy that cannot save filtered checkpoints", "", "", filter_fails, kind="filter"
            )
        )
    out += state_checks(model, state, load=False)
    out += deepspeed_key_checks(model, state)
    return out


def swapped(model: SemanticModel, call: ast.Call) -> bool:
    return is_state(model, call.args[0]) and is_path(model, call.args[1])


def filter_checks(model: SemanticModel, flt: ast.expr, state: ast.expr | None) -> list[Check]:
    if not_a_dict(model, flt):
        raised, where = facts.SAVE_FILTER_ERRORS["not_dict"]
        return [
            Check(
                "`filter=` is not a dict (it maps state keys to callables)", raised.split(",")[0] + ", given …", where
            )
        ]
    display = flt if isinstance(flt, ast.Dict) else None
    if display is None:
        return []
    out: list[Check] = []
    keys = constant_keys(display)
    state_display = dict_display(model, state)
    state_keys = constant_keys(state_display) if state_display is not None else None
    if keys is not None and state_keys is not None:
        missing = [k for k in keys if k not in state_keys]
        if missing:
            raised, where = facts.SAVE_FILTER_ERRORS["missing_keys"]
            what = f"filter key{'s' if len(missing) > 1 else ''} {', '.join(repr(k) for k in missing)} not in the state keys {sorted(state_keys)}"
            out.append(Check(what, raised.split(" {")[0] + " … are not present in the state keys …", where))
    for key, value in zip(display.keys, display.values):
        if not_callable(model, value):
            raised, where = facts.SAVE_FILTER_ERRORS["not_callable"]
            label = model.segment(key) if key is not None else "?"
            out.append(
                Check(
                    f"the filter for {label} is not a callable",
                    raised.split(" for key")[0] + " … to be a callable",
                    where,
                )
            )
            break
    return out


def not_a_dict(model: SemanticModel, expr: ast.expr) -> bool:
    if isinstance(expr, (ast.Lambda, ast.List, ast.Tuple, ast.Set, ast.ListComp, ast.JoinedStr)):
        return True
    if isinstance(expr, ast.Constant):
        return expr.value is not None
    if isinstance(expr, (ast.Name, ast.Attribute)):
        values = model.values(expr)
        return bool(values) and all(
            isinstance(v, (FuncRef, Seq)) or (isinstance(v, Const) and v.value is not None) for v in values
        )
    return False


def not_callable(model: SemanticModel, expr: ast.expr) -> bool:
    if isinstance(expr, (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Dict, ast.Set)):
        return True
    if isinstance(expr, ast.Name):
        values = model.values(expr)
        return bool(values) and all(isinstance(v, (Const, Seq, DictVal)) for v in values)
    return False


def state_checks(model: SemanticModel, state: ast.expr | None, load: bool) -> list[Check]:
    """The state must hold exactly one set-up model under the strategies that checkpoint through it."""
    verb = "load" if load else "save"
    if state is not None and is_state_dict_call(state):
        what = "a state that is `.state_dict()` (tensors, not the set-up model)"
        return [
            Check(
                what,
                "ValueError: Could not find a {model} in the provided checkpoint state.",
                verb,
                model_state_fails(load),
                kind="model",
            )
        ]
    display = dict_display(model, state)
    if display is None or any(k is None for k in display.keys):
        return []
    values = list(display.values)
    if load and not values:
        return []  # `load(path, {})`: the "no state" check
    if values and all(not_a_module(model, v) for v in values):
        kind = (
            "`.state_dict()` instead of the set-up model"
            if any(is_state_dict_call(v) for v in values)
            else "no set-up model"
        )
        return [
            Check(
                f"a state with {kind}",
                "ValueError: Could not find a {model} in the provided checkpoint state.",
                verb,
                model_state_fails(load),
                kind="model",
            )
        ]
    owners = [model.set_up_models(v) if isinstance(v, (ast.Name, ast.Attribute)) else [] for v in values]
    single = [o[0].call for o in owners if len(o) == 1]
    if len({id(c) for c in single}) >= 2:
        return [
            Check(
                "a state with several set-up models",
                "ValueError: Found multiple {multiple} in the given state.",
                verb,
                model_state_fails(load),
                kind="model",
            )
        ]
    return []


def deepspeed_key_checks(model: SemanticModel, state: ast.expr | None) -> list[Check]:
    display = dict_display(model, state)
    if display is None:
        return []
    colliding = []
    for key, value in zip(display.keys, display.values):
        if not (isinstance(key, ast.Constant) and key.value in facts.DEEPSPEED_INTERNAL_KEYS):
            continue
        if collides(model, str(key.value), value):
            colliding.append(str(key.value))
    if not colliding:
        return []
    keys = ", ".join(repr(k) for k in colliding)
    what = f"state key {keys} collides" if len(colliding) == 1 else f"state keys {keys} collide"
    what += " with DeepSpeed's engine state"
    return [
        Check(
            what,
            facts.DEEPSPEED_KEYS_WARNING.format(keys=", ".join(colliding)),
            "strategies/deepspeed.py:850-873",
            is_deepspeed,
            warning_only=True,
        )
    ]


def collides(model: SemanticModel, key: str, value: ast.expr) -> bool:
    """Lightning drops the engine and its optimizer from the state before the check: a key holding
    one of them does not collide."""
    if not_a_module(model, value):
        return True
    if key in ("module", "optimizer"):
        return False  # may be the engine or its optimizer
    if isinstance(value, (ast.Name, ast.Attribute)) and model.set_up_models(value):
        return False
    return isinstance(value, ast.Name) and not model.set_up_optimizers(value)


def load_checks(model: SemanticModel, call: ast.Call) -> list[Check]:
    if unpacked(call):
        return []
    state = argument(call, 1, "state")
    if (
        state is None
        or (isinstance(state, ast.Constant) and state.value is None)
        or (isinstance(state, ast.Dict) and not state.keys)
    ):
        return [
            Check(
                "`load(path)` without a state holding the set-up model",
                "ValueError: Got {strategy}.load_checkpoint(..., state=None) but a state with at least  a model instance to reload is required.",
                "load",
                model_state_fails(True),
                kind="load_state",
            )
        ]
    return state_checks(model, state, load=True)


def load_raw_checks(model: SemanticModel, call: ast.Call) -> list[Check]:
    if unpacked(call):
        return []
    obj = argument(call, 1, "obj")
    if obj is None:
        return []
    optimizer = bool(model.set_up_optimizers(obj))
    what = "`load_raw(path, optimizer)`" if optimizer else "`load_raw(path, obj)`"
    return [Check(what, "", "", load_raw_fails(optimizer), kind="load_raw")]


def lightning_message(check: Check, cf: facts.CheckpointFacts) -> tuple[str, str]:
    """Lightning's message for ``check`` under the strategy ``cf`` describes, and its source."""
    if check.kind == "filter":
        return cf.filter_error or "", cf.filter_where or ""
    if check.kind == "model":
        where = cf.model_where[0 if check.where == "save" else 1]
        return check.raised.format(model=cf.model_word, multiple=cf.multiple_word), where
    if check.kind == "load_state":
        return check.raised.format(strategy=cf.label), cf.load_state_where
    if check.kind == "load_raw":
        return cf.load_raw_error or "", cf.load_raw_where or ""
    return check.raised, check.where
