"""Whether a monitored key can be one of the names the logged keys give ``trainer.callback_metrics``
(Lightning's key rules: ``_step``/``_epoch`` forks, ``/dataloader_idx_N``, no ``_step`` name from an
evaluation loop)."""

from __future__ import annotations

import difflib
import re

from fabric_lsp import facts
from fabric_lsp.engine.program.lightning_modules import LogCall

#: ``/dataloader_idx_N``: the suffix an evaluation key gets with several dataloaders
#: (``trainer/connectors/logger_connector/result.py:420``)
_DATALOADER_IDX = re.compile(r"/dataloader_idx_\d+$")
#: what ``ModelCheckpoint`` can always monitor besides the callback metrics
#: (``callbacks/model_checkpoint.py:896-904``)
CHECKPOINT_ALWAYS = ("epoch", "step")
#: what 1.x filled from a returned result's accumulators (``logger_connector.py:389-393`` of 1.2.10)
LEGACY_ALWAYS = ("early_stop_on", "checkpoint_on")


def spellings(key: str) -> set[str]:
    """The logged names that may give ``key``: itself, without a dataloader suffix, and the
    name that forks into it (``loss`` for ``loss_step``/``loss_epoch``)."""
    out = {key, _DATALOADER_IDX.sub("", key)}
    for name in list(out):
        for fork in ("_step", "_epoch"):
            if name.endswith(fork) and len(name) > len(fork):
                out.add(name[: -len(fork)])
    return out


def may_give(call: LogCall, key: str, as_2x: bool = True) -> bool:
    """Whether the log call may put ``key`` into ``callback_metrics`` (True where not known).
    Before 1.4 (``as_2x`` False) its name may give ``key`` at any level."""
    if not as_2x:
        return any(call.key.may_be(name) for name in spellings(key))
    names = call.callback_metrics()
    plain = {key, _DATALOADER_IDX.sub("", key)}
    if names is not None:
        return bool(plain & set(names))
    if call.key.exact is not None:
        exact = call.key.exact
        return bool(plain & {exact, f"{exact}_step", f"{exact}_epoch"})
    return any(call.key.may_be(name) for name in spellings(key))


def logged_names(calls: tuple[LogCall, ...], as_2x: bool = True) -> list[str]:
    """The callback-metric names the log calls give, in order, for the message (before 1.4: the
    logged names)."""
    out: dict[str, None] = {}
    for c in calls:
        exact = (c.key.exact,) if c.key.exact else ()
        for name in (c.callback_metrics() if as_2x else None) or exact:
            out.setdefault(name, None)
    return list(out)


def closest(key: str, names: list[str]) -> str | None:
    found = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    return found[0] if found else None


def always_available(kind: str, key: str, as_2x: bool = True) -> bool:
    """``epoch``/``step`` for ``ModelCheckpoint``; before 1.4 also the keys 1.x filled from a
    returned result (``early_stop_on``, ``checkpoint_on``)."""
    return (kind == facts.MODEL_CHECKPOINT_CLASS and key in CHECKPOINT_ALWAYS) or (not as_2x and key in LEGACY_ALWAYS)
