"""The one regular expression that tells a path no pattern of an ignore file matches (so that the
patterns are not compiled and tried one by one) never skips a path that a pattern decides: for
random ``.gitignore`` lines and paths, an ignore file decides as ``pathspec`` does, and refuses
the lines ``pathspec`` refuses."""

from __future__ import annotations

import pathspec
import pytest
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
PATHS = st.builds(
    lambda parts, d: "/".join(parts) + ("/" if d else ""), st.lists(NAMES, min_size=1, max_size=4), st.booleans()
)


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(LINES | st.sampled_from(["# comment", "", "*.py", "!/a/", "a/**/b"]), max_size=8),
    paths=st.lists(PATHS, min_size=1, max_size=8),
)
def test_an_ignore_file_decides_as_pathspec_does(lines, paths):
    try:
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
    except Exception:  # a line pathspec cannot compile: the ignore file is not used at all
        with pytest.raises(Exception):  # noqa: B017, PT011 - whatever pathspec raises
            _IgnoreFile(lines)
        return
    ignore = _IgnoreFile(lines)
    assert ignore.any_pattern is not None
    for path in paths:
        assert ignore.check(path) == spec.check_file(path).include, (lines, path)
        if not ignore.any_pattern.search(path):
            assert spec.check_file(path).include is None, (lines, path)
