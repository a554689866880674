"""FAB005's checks: for each Fabric call it watches, the DeepSpeed configurations that make it fail
(a predicate over one scenario) and Lightning's (or DeepSpeed's) own message."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Callable

from fabric_lsp import facts
from fabric_lsp.engine.lightning.configurations import Scenario, is_deepspeed
from fabric_lsp.engine.program.setups import origin_key, relevant_setups, under_if
from fabric_lsp.engine.python.values import Const, FabricInst
from fabric_lsp.engine.semantic.model import SemanticModel

WATCHED = ("setup", "setup_module", "backward", "clip_gradients", "init_module", "no_backward_sync")


@dataclass(frozen=True)
class Check:
    what: str  # the misuse, in the message's words
    fails: Callable[[Scenario], bool | None]
    raised: str  # what Lightning (or DeepSpeed) raises
    warning_only: bool = False  # Lightning only warns: never an error
    #: the failure also needs a path the code may not take (a setup under an ``if``): at most a warning
    conditional: bool = False


def _stage_in(stages: tuple[int, ...]) -> Callable[[Scenario], bool | None]:
    def fails(s: Scenario) -> bool | None:
        if not is_deepspeed(s):
            return False
        stage = facts.deepspeed_stage(s.args.strategy) if s.args is not None else None
        return None if stage is None else stage in stages

    return fails


def check_for(model: SemanticModel, call: ast.Call, fabrics: list[FabricInst]) -> Check | None:
    """The check that applies to ``call`` (a call of one of ``WATCHED`` on ``fabrics``), or None
    where no DeepSpeed configuration makes it fail."""
    name = call.func.attr  # type: ignore[attr-defined]
    if name in ("setup", "setup_module"):
        return _setup_check(model, call, fabrics)
    if name == "backward":
        return _backward_check(model, call, fabrics)
    if name == "clip_gradients":
        if len(call.args) < 3 and not any(k.arg in ("clip_val", "max_norm") or k.arg is None for k in call.keywords):
            return None  # neither given: Lightning raises ValueError under every strategy
        return Check(
            "`clip_gradients` under DeepSpeed",
            is_deepspeed,
            "NotImplementedError: DeepSpeed handles gradient clipping automatically within the optimizer. "
            "Make sure to set the `gradient_clipping` value in your Config.",
        )
    if name == "init_module":
        if not _empty_init_false(model, call):
            return None
        return Check(
            "`init_module(empty_init=False)` under DeepSpeed ZeRO stage 3",
            _stage_in((3,)),
            "NotImplementedError: `empty_init=False` is not a valid choice with `DeepSpeedStrategy` when ZeRO stage 3 is enabled.",
        )
    if name == "no_backward_sync":
        return Check(
            "`no_backward_sync` under DeepSpeed (a no-op)",
            is_deepspeed,
            "PossibleUserWarning: The `DeepSpeedStrategy` does not support skipping the gradient synchronization. "
            "Remove `.no_backward_sync()` from your code or choose a different strategy.",
            warning_only=True,
        )
    return None


def _empty_init_false(model: SemanticModel, call: ast.Call) -> bool:
    arg = next((k.value for k in call.keywords if k.arg == "empty_init"), call.args[0] if call.args else None)
    if arg is None:
        return False
    values = model.values(arg)
    return bool(values) and all(isinstance(v, Const) and v.value is False for v in values)


def _setup_check(model: SemanticModel, call: ast.Call, fabrics: list[FabricInst]) -> Check | None:
    setup = model.setup_call(call)
    if setup is None or setup.optimizers is None:
        return None
    if setup.optimizers >= 2:
        return Check(
            "several optimizers in one `setup` under DeepSpeed",
            is_deepspeed,
            f"ValueError: Currently only one optimizer is supported with DeepSpeed. Got {setup.optimizers} optimizers instead.",
        )
    if setup.optimizers == 1 or _optimizers_set_up_later(model, call, fabrics):
        return None  # separate setup_optimizers: FAB001's finding
    return Check(
        "a model set up without an optimizer under DeepSpeed ZeRO stage 1/2",
        _stage_in((1, 2)),
        "AssertionError: zero stage {1 or 2} requires an optimizer (DeepSpeed's engine, through `setup`)",
    )


def _optimizers_set_up_later(model: SemanticModel, setup: ast.Call, fabrics: list[FabricInst]) -> bool:
    """Whether a ``setup_optimizers`` call of the document may be on one of ``fabrics``: the
    calls in the setup's own function first (reading only that function), then the Fabrics of
    every such call in the document (found once per analysis). A Fabric known only by its type
    has an origin of its own, which no other equals: none is looked for."""
    wanted = {origin_key(f) for f in fabrics}
    for call in model.module.calls_within(model.module.scope_of(setup), "setup_optimizers"):
        if not isinstance(call.func, ast.Attribute):
            continue
        if {origin_key(f) for f in model.fabrics(call.func.value, by_type=False)[0]} & wanted:
            return True
    return bool(wanted & model.fabrics_calling("setup_optimizers"))


_SETUP_CALL_TEXT = re.compile(r"\.\s*(?:" + "|".join(facts.MODEL_SETUP_METHODS) + r")\s*\(")


def _setup_calls_in_text(model: SemanticModel) -> int:
    """At least the number of model setup calls in the document, from the text. The answer
    rests on every statement that mentions a setup method, and is recorded so — a shortcut
    taken only when it rules a check out."""
    text = model.module.text
    count: int = model.asked_once(("setup calls in the text",), lambda: len(_SETUP_CALL_TEXT.findall(text)))
    if count < 2:
        for name in facts.MODEL_SETUP_METHODS:
            model.module.record_lookup(name)  # what the answer depends on
    return count


def _backward_check(model: SemanticModel, call: ast.Call, fabrics: list[FabricInst]) -> Check | None:
    if any(k.arg in ("model", None) for k in call.keywords) or not call.args:
        return None
    if _setup_calls_in_text(model) < 2:
        return None  # at most one model is set up: no need to follow the loss
    setups = relevant_setups(model.setups, call, call.args[0], model.module, fabrics)
    if len(setups) < 2:
        return None
    unconditional = [s for s in setups if not under_if(model.module, s)]
    return Check(
        "`backward` without `model=` while several models are set up under DeepSpeed",
        is_deepspeed,
        "ValueError: When using multiple models + deepspeed, please provide the model used to perform the "
        "optimization: `self.backward(loss, model=model)`",
        conditional=len(unconditional) < 2,
    )
