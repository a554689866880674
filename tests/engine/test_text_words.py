"""``text.words`` and ``text.identifiers`` find what their regular expressions (``\\w+`` and
``[^\\W\\d]\\w*``) find, on any text: ASCII text takes a faster way (``str.translate`` and
``split``), which must give the same sets, down to words that begin with digits (``0x1f``,
``1_000``, ``42``), control characters ``split`` treats as spaces, and non-ASCII text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fabric_lsp.engine.python.text import identifiers, words
from hypothesis import example, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
WORD = re.compile(r"\w+")
IDENTIFIER = re.compile(r"[^\W\d]\w*")

#: the characters that decide: digits, letters, ``_``, separators, and some that are not ASCII
PIECES = st.text(alphabet=st.sampled_from(list("0123456789ab_Z .(\t\n\x0b\x0c\x1c\x1f\x7f#'\"xé٣ß")), max_size=40)


@settings(max_examples=500, deadline=None)
@given(st.one_of(PIECES, st.text(max_size=40)))
@example("0x1f 1_000 42 x1 _1 1e5 a.b")
@example("٣x")  # an Arabic-Indic digit: a digit to the expression, and the text is not ASCII
@example("")
def test_the_sets_the_expressions_find(text):
    assert words(text) == frozenset(WORD.findall(text))
    assert identifiers(text) == frozenset(IDENTIFIER.findall(text))


def test_words_that_begin_with_digits():
    assert identifiers("0x1f + 1_000 * 42 - x1") == {"x1f", "_000", "x1"}
    assert words("0x1f + 1_000 * 42 - x1") == {"0x1f", "1_000", "42", "x1"}


@pytest.mark.parametrize("path", sorted((ROOT / "server" / "fabric_lsp").rglob("*.py"))[::9], ids=lambda p: p.name)
def test_on_real_modules(path):
    text = path.read_text(encoding="utf-8")
    assert identifiers(text) == frozenset(IDENTIFIER.findall(text))
    assert words(text) == frozenset(WORD.findall(text))
