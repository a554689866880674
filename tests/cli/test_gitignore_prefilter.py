"""The one regular expression that tells a path no pattern of an ignore file matches (so that the
patterns are not tried one by one) never skips a path that a pattern decides: for random
``.gitignore`` lines and paths, a path it lets pass is one ``pathspec`` finds no decisive
pattern for."""

from __future__ import annotations

import pathspec
from fabric_lsp.config import _IgnoreFile
from hypothesis import given, settings
from hypothesis import strategies as st

PIECES = ["a", "b", "x.py", "*", "**", "?", "[ab]", "/", ".", "-", "build", "\\#", "\\!"]
LINES = st.builds(
    lambda neg, parts, slash: ("!" if neg else "") + "".join(parts) + ("/" if slash else ""),
    st.booleans(),
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=5),
    st.booleans(),
)
NAMES = st.sampled_from(["a", "b", "x.py", "build", "ab", "a.b", "#c", "!d"])
PATHS = st.builds(lambda parts, d: "/".join(parts) + ("/" if d else ""), st.lists(NAMES, min_size=1, max_size=4), st.booleans())


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(LINES | st.sampled_from(["# comment", "", "*.py", "!/a/", "a/**/b"]), max_size=8), paths=st.lists(PATHS, min_size=1, max_size=8))
def test_a_path_no_pattern_matches_is_one_no_pattern_decides(lines, paths):
    try:
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
    except Exception:  # a line pathspec cannot compile: the ignore file is not used at all
        return
    ignore = _IgnoreFile(spec)
    assert ignore.any_pattern is not None
    for path in paths:
        if not ignore.any_pattern.search(path):
            assert spec.check_file(path).include is None, (lines, path)
