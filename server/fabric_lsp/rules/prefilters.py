"""Every rule's prefilter (:class:`~fabric_lsp.engine.rule.Prefilter`), by code, in the rules'
order (that of :data:`fabric_lsp.rules.ALL_RULES`).

Kept apart from the rules' checks: importing this module imports no analysis, so the command line
tells the files some rule would look at from the others (most files of a project) before it
imports the engine, and a project none of whose files any rule looks at is checked without it.
Each rule takes its own entry (``prefilter = PREFILTERS["FAB001"]``); a rule added to the registry
adds its entry here.
"""

from __future__ import annotations

import re

from fabric_lsp import facts
from fabric_lsp.engine.rule import Prefilter, TextProbe

#: a rank in the text: FAB002's and PL001's (one object: asked once per text)
_RANKS = Prefilter.of_parts(
    (("_rank",), re.compile(r"_rank\b")),
    (("get_rank",), re.compile(r"get_rank")),
    (("is_global_zero",), re.compile(r"is_global_zero")),
    (("rank_zero_",), re.compile(r"rank_zero_")),
    (("RANK",), re.compile(r"RANK\b")),
)

#: the class's name in the text: FAB008's and FAB010's (one object: asked once per text)
_FABRIC = Prefilter(re.compile(r"Fabric"))

PREFILTERS: dict[str, Prefilter] = {
    "FAB001": Prefilter(re.compile(r"\bsetup_optimizers\b"), keywords=("setup_optimizers",)),
    "FAB002": _RANKS,
    "FAB003": Prefilter(re.compile(r"\.setup(?:_module)?\s*\(|\bFabric\b|\bfabric\b"), keywords=(".setup", "abric")),
    "FAB004": Prefilter(re.compile(r"\.backward\s*\(")),
    "FAB005": Prefilter.of_parts(
        (
            ("setup", "clip_gradients", "init_module", "no_backward_sync"),
            re.compile(r"\b(?:setup|setup_module|clip_gradients|init_module|no_backward_sync)\s*\("),
        ),
        (("backward",), re.compile(r"backward\s*\(\s*[^)\s]")),
    ),
    "FAB006": Prefilter(re.compile(r"\.(?:save|load|load_raw)\s*\(")),
    "FAB007": Prefilter(re.compile(r"\.(?:launch|" + "|".join(facts.NEEDS_LAUNCH) + r")\s*\(")),
    "FAB008": _FABRIC,
    "FAB009": Prefilter(re.compile(r"\.setup\s*\(")),
    "FAB010": _FABRIC,
    "FAB011": Prefilter(re.compile(r"(?i)fabric|lite"), folded=("fabric", "lite")),
    "PL001": _RANKS,
    "PL002": Prefilter(re.compile(r"\.fit\(|CLI\("), keywords=(".fit(", "CLI(")),
    "PL003": Prefilter(
        re.compile(r"\bdef\s+(?:training_step|configure_optimizers)\b|\.(?:fit|validate|test|predict)\("),
        keywords=("training_step", "configure_optimizers", ".fit(", ".validate(", ".test(", ".predict("),
    ),
    "PL004": Prefilter(
        re.compile(r"(?:training|validation|test)_epoch_end|Trainer|\.load_from_checkpoint\s*\(|\.hparams\s*=[^=]"),
        keywords=("_epoch_end", "Trainer", "load_from_checkpoint", "hparams"),
    ),
    "PL005": Prefilter(
        re.compile(r"ckpt_path|\.(?:test|validate|predict)\("),
        keywords=("ckpt_path", ".test(", ".validate(", ".predict("),
    ),
    "PL006": Prefilter(re.compile(r"Trainer"), keywords=("Trainer",)),
}


#: the prefilters :func:`may_have_findings` asks first: the cheap ones that let most files through
#: (over the six speed-issue trees: a file one of them lets through is told at once)
_ASKED_FIRST = ("FAB007", "FAB008", "FAB011", "FAB006", "FAB004", "FAB009")
_ASKED = (*_ASKED_FIRST, *(code for code in PREFILTERS if code not in _ASKED_FIRST))


def may_have_findings(text: str, codes: frozenset[str]) -> bool:
    """Whether the prefilter of one of the rules ``codes`` lets ``text`` through (else no rule of
    them looks at it: its analysis finds nothing, and no fix applies)."""
    probe = TextProbe(text)
    return any(probe.passes(PREFILTERS[code]) for code in _ASKED if code in codes)


__all__ = ["PREFILTERS", "may_have_findings"]
