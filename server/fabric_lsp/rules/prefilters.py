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


def _word_first(word: str, rest: str = "") -> re.Pattern[str]:
    """``\\b<word><rest>`` written to start with the word itself, the boundary before it checked
    behind it: ``re`` finds a pattern that starts with literal text by scanning for that text,
    but tries one that starts with ``\\b`` or an alternation at every position of the file
    (~10× slower over a project, where every rule's prefilter reads every candidate file)."""
    literal = re.escape(word)
    return re.compile(rf"{literal}(?<!\w{literal}){rest}")


def _literal(text: str) -> tuple[tuple[str, ...], re.Pattern[str]]:
    """A part that is the substring ``text`` itself."""
    return (text,), re.compile(re.escape(text))


#: Each prefilter that is not one literal pattern is written twice: ``pattern``, the test in one
#: readable expression, and ``parts``, the same test as alternatives that each start with literal
#: text, the one :meth:`~fabric_lsp.engine.rule.Prefilter.matches` runs
#: (``tests/rules/test_prefilters.py`` checks that the two agree).
PREFILTERS: dict[str, Prefilter] = {
    "FAB001": Prefilter(
        re.compile(r"\bsetup_optimizers\b"), parts=((("setup_optimizers",), _word_first("setup_optimizers", r"\b")),)
    ),
    "FAB002": _RANKS,
    "FAB003": Prefilter(
        re.compile(r"\.setup(?:_module)?\s*\(|\bFabric\b|\bfabric\b"),
        parts=(
            (("fabric",), _word_first("fabric", r"\b")),
            (("Fabric",), _word_first("Fabric", r"\b")),
            ((".setup",), re.compile(r"\.setup(?:_module)?\s*\(")),
        ),
    ),
    "FAB004": Prefilter(re.compile(r"\.backward\s*\(")),
    "FAB005": Prefilter(
        re.compile(r"\b(?:setup|setup_module|clip_gradients|init_module|no_backward_sync)\s*\(|backward\s*\(\s*[^)\s]"),
        parts=(
            (("setup",), _word_first("setup", r"(?:_module)?\s*\(")),
            (("backward",), re.compile(r"backward\s*\(\s*[^)\s]")),
            (("clip_gradients",), _word_first("clip_gradients", r"\s*\(")),
            (("init_module",), _word_first("init_module", r"\s*\(")),
            (("no_backward_sync",), _word_first("no_backward_sync", r"\s*\(")),
        ),
    ),
    "FAB006": Prefilter(re.compile(r"\.(?:save|load|load_raw)\s*\(")),
    "FAB007": Prefilter(re.compile(r"\.(?:launch|" + "|".join(facts.NEEDS_LAUNCH) + r")\s*\(")),
    "FAB008": _FABRIC,
    "FAB009": Prefilter(re.compile(r"\.setup\s*\(")),
    "FAB010": _FABRIC,
    "FAB011": Prefilter(re.compile(r"(?i)fabric|lite"), folded=("fabric", "lite")),
    "PL001": _RANKS,
    "PL002": Prefilter(re.compile(r"\.fit\(|CLI\("), parts=(_literal(".fit("), _literal("CLI("))),
    "PL003": Prefilter(
        re.compile(r"\bdef\s+(?:training_step|configure_optimizers)\b|\.(?:fit|validate|test|predict)\("),
        parts=(
            *(_literal(f".{method}(") for method in ("fit", "validate", "test", "predict")),
            (
                ("training_step", "configure_optimizers"),
                _word_first("def", r"\s+(?:training_step|configure_optimizers)\b"),
            ),
        ),
    ),
    "PL004": Prefilter(
        re.compile(r"(?:training|validation|test)_epoch_end|Trainer|\.load_from_checkpoint\s*\(|\.hparams\s*=[^=]"),
        parts=(
            _literal("Trainer"),
            *(_literal(f"{stage}_epoch_end") for stage in ("training", "validation", "test")),
            (("load_from_checkpoint",), re.compile(r"\.load_from_checkpoint\s*\(")),
            (("hparams",), re.compile(r"\.hparams\s*=[^=]")),
        ),
    ),
    "PL005": Prefilter(
        re.compile(r"ckpt_path|\.(?:test|validate|predict)\("),
        parts=(_literal("ckpt_path"), *(_literal(f".{method}(") for method in ("test", "validate", "predict"))),
    ),
    "PL006": Prefilter(re.compile(r"Trainer")),
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
