"""Paths (engine/python/paths.py): two alternatives combine only where their decisions agree."""

from __future__ import annotations

from fabric_lsp.engine.python import paths
from hypothesis import given, settings
from hypothesis import strategies as st


def _reference(a: frozenset, b: frozenset) -> frozenset | None:
    """The union of two paths, None where one decision has two outcomes (the longer path is kept
    whole when the union would hold too many decisions)."""
    outcomes: dict = {}
    for key, outcome in sorted(b, key=repr):
        outcomes[key] = outcome
    if any(key in outcomes and outcomes[key] != outcome for key, outcome in a):
        return None
    merged = a | b
    return merged if len(merged) <= paths.MAX_DECISIONS else max(a, b, key=len) if len(a) != len(b) else a


def _consistent(pairs: list) -> frozenset:
    chosen: dict = {}
    for key, outcome in pairs:
        chosen.setdefault(key, outcome)
    return frozenset(chosen.items())


PATHS = st.lists(st.tuples(st.integers(0, 30), st.one_of(st.booleans(), st.integers(0, 3))), max_size=30).map(
    _consistent
)


@settings(max_examples=500)
@given(PATHS, PATHS)
def test_merge_is_the_union_of_agreeing_paths(a, b):
    assert paths.merge(a, b) == _reference(a, b)


def test_a_decision_taken_two_ways_does_not_merge():
    assert paths.merge(frozenset({("tpu", True), ("n", 2)}), frozenset({("tpu", False)})) is None
    assert paths.merge(frozenset({("tpu", True)}), frozenset({("tpu", True), ("n", 1)})) == {("tpu", True), ("n", 1)}
