"""Every rule's prefilter lets through exactly the texts its pattern matches: the parts it runs
(written to start with literal text, for speed) say what its readable pattern says."""

from __future__ import annotations

import re

import pytest
from fabric_lsp.engine.rule import TextProbe
from fabric_lsp.rules.prefilters import PREFILTERS, may_have_findings
from hypothesis import given, settings
from hypothesis import strategies as st

#: pieces of the texts the prefilters look for, and what may stand around them
_WORDS = sorted(
    {
        word
        for prefilter in PREFILTERS.values()
        for _, part in prefilter.parts
        for word in re.findall(r"\w+", part.pattern)
    }
    | {
        "setup",
        "_module",
        "def",
        "training",
        "validation",
        "test",
        "_epoch_end",
        "backward",
        "Fabric",
        "fabric",
        "lite",
    }
)
_AROUND = [".", "(", ")", " ", "\t", "\n", "=", "==", "x", "_", "é", "1", "#", '"', "self.", "def "]
_TEXTS = st.lists(st.sampled_from(_WORDS + _AROUND), max_size=12).map("".join) | st.text(max_size=40)


@pytest.mark.parametrize("code", sorted(PREFILTERS))
@settings(max_examples=400, deadline=None)
@given(text=_TEXTS)
def test_a_prefilter_lets_through_what_its_pattern_matches(code, text):
    prefilter = PREFILTERS[code]
    expected = prefilter.pattern.search(text) is not None
    assert prefilter.matches(text) == expected
    assert TextProbe(text).passes(prefilter) == expected


@pytest.mark.parametrize(
    ("code", "text", "passes"),
    [
        ("FAB001", "fabric.setup_optimizers(opt)", True),
        ("FAB001", "my_setup_optimizers(opt)", False),
        ("FAB003", "model = fabric.setup_module(model)", True),
        ("FAB003", "from lightning import Fabric", True),
        ("FAB003", "MyFabricLike = 1", False),
        ("FAB005", "def setup(self):\n    pass", True),
        ("FAB005", "presetup (x)", False),
        ("FAB005", "loss.backward( loss)", True),
        ("FAB005", "loss.backward()", False),
        ("PL003", "    def training_step(self, batch, i):", True),
        ("PL003", "undef training_step", False),
        ("PL004", "def validation_epoch_end(self, outs):", True),
        ("PL005", "trainer.test(model)", True),
        ("PL005", "trainer.tests(model)", False),
    ],
)
def test_a_prefilter_on_examples(code, text, passes):
    assert PREFILTERS[code].matches(text) is passes


def test_a_file_some_rule_looks_at_is_one_some_pattern_matches():
    texts = ["import os\nprint(1)\n", "trainer.fit(model)\n", "x = fabric\n", "def setupx(): pass\n"]
    every = frozenset(PREFILTERS)
    for text in texts:
        assert may_have_findings(text, every) == any(p.pattern.search(text) for p in PREFILTERS.values())
