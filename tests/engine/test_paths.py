"""Paths (engine/python/paths.py): two alternatives combine only where their decisions agree."""

from __future__ import annotations

from fabric_lsp.engine.python import paths
from hypothesis import example, given, settings
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


@settings(max_examples=300)
@given(PATHS, PATHS)
def test_a_merge_asked_again_with_equal_paths_is_the_same(a, b):
    """:func:`paths.merge` is remembered by the two paths' contents: asked again with equal paths
    that are other objects (built again, in another order), it answers as the reference does."""
    first = paths.merge(a, b)
    again = paths.merge(frozenset(sorted(a, key=repr, reverse=True)), frozenset(sorted(b, key=repr)))
    assert first == again == _reference(a, b)


def test_a_decision_taken_two_ways_does_not_merge():
    assert paths.merge(frozenset({("tpu", True), ("n", 2)}), frozenset({("tpu", False)})) is None
    assert paths.merge(frozenset({("tpu", True)}), frozenset({("tpu", True), ("n", 1)})) == {("tpu", True), ("n", 1)}


@settings(max_examples=300)
@given(PATHS, st.integers(1, 30))  # a key that is not falsy (a real one is a tuple)
@example(frozenset((k, True) for k in range(100, 100 + paths.MAX_DECISIONS)), 1)  # a full path stays as it is
@example(frozenset((k, True) for k in range(100, 99 + paths.MAX_DECISIONS)), 1)  # one short: takes it
def test_a_test_not_known_goes_both_ways_on_a_path_as_merging_each_way_would(path, key):
    """:func:`conditions._undecided` (a test no value decides, on ``path``): the outcomes that
    merge with ``path``, each on the merged path."""
    from fabric_lsp.engine.python import conditions

    expected = [(o, p) for o in (True, False) if (p := paths.merge(path, frozenset({(key, o)}))) is not None]
    assert conditions._undecided(None, None, path, key) == expected
