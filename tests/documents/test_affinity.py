"""Which chunk a worker that is done takes next (:class:`~fabric_lsp.documents.pool.Affinity`): of
the costliest few not handed yet, the one holding the most files that worker parsed already —
never one that costs less than half the costliest."""

from __future__ import annotations

from fabric_lsp.documents.pool import PICK_WINDOW, Affinity, chunks


def _affinity(costs: list[int]) -> Affinity:
    order = [range(i, i + 2) for i in range(0, len(costs), 2)]
    return Affinity(order, [f"/p/f{i}.py" for i in range(len(costs))], costs)


def test_a_worker_with_nothing_parsed_takes_the_costliest():
    affinity = _affinity([10] * 8)
    assert affinity.pick([], [0, 1, 2, 3]) == 0


def test_a_worker_takes_the_chunk_whose_files_it_parsed():
    affinity = _affinity([10] * 8)
    affinity.parsed[0] = frozenset({"/p/f0.py", "/p/f1.py", "/p/f5.py", "/p/f4.py"})  # chunk 2 holds f4, f5
    affinity.parsed[3] = frozenset({"/p/f0.py"})
    assert affinity.pick([0], [1, 2, 3]) == 2
    assert affinity.pick([0, 3], [1, 2]) == 1  # only what it held after its last chunk counts: f0


def test_only_the_costliest_few_are_chosen_among():
    affinity = _affinity([10] * 2 * (PICK_WINDOW + 2))
    last = PICK_WINDOW + 1
    affinity.parsed[0] = frozenset({f"/p/f{2 * last}.py", f"/p/f{2 * last + 1}.py"})
    assert affinity.pick([0], list(range(1, last + 1))) == 1  # its chunk is beyond the window


def test_a_chunk_less_than_half_as_costly_is_not_taken_first():
    affinity = _affinity([10, 10, 4, 4, 3, 3])  # chunk 1 costs 8, under half of chunk 0's 20
    affinity.parsed[2] = frozenset({"/p/f2.py", "/p/f3.py"})
    assert affinity.pick([2], [0, 1]) == 0


def test_the_chunks_are_handed_costliest_first():
    order = chunks([1, 1, 9, 9, 5, 5, 1, 1], 1)
    assert [sum([1, 1, 9, 9, 5, 5, 1, 1][i] for i in r) for r in order] == [18, 10, 2, 2]
